"""Croissant metadata, Hugging Face card and release export (issue 8, SPEC A11 and C).

Each test builds a tiny release directory (3 films × 2 languages, the release_layout columns, a
films.jsonl and a manifest with sha256/size/rows) and checks the metadata with the real
consumers: mlcroissant validates and reads croissant.json, ``datasets`` loads the exported HF
directory offline, ``json`` reads films.json.
"""

from __future__ import annotations

import hashlib
import json
import logging
import socket
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from warehouse.croissant import (
    CroissantError,
    arrow_to_croissant_type,
    build_croissant,
    write_croissant,
)
from warehouse.export import ExportError, export_release
from warehouse.hf_card import render_card

FILMS = [  # imdb_id, title, year, split
    ("tt0000001", "Alpha", 1994, "public"),
    ("tt0000002", "Beta", 2003, "heldback"),
    ("tt0000003", "Gamma", 2015, "public"),
]
LANGS = ("en", "ar")
HELD = {"tt0000002"}
RAI_REQUIRED = (
    "dataCollection", "dataCollectionType", "dataPreprocessingProtocol", "dataAnnotationProtocol",
    "personalSensitiveInformation", "dataBiases", "dataLimitations", "dataUseCases",
    "dataSocialImpact", "dataReleaseMaintenancePlan", "hasSyntheticData",
)


def _tables(with_split: bool = True) -> dict[str, pa.Table]:
    i32, i64 = pa.int32(), pa.int64()
    films = {
        "id": pa.array([1, 2, 3], i64),
        "imdb_id": [f[0] for f in FILMS],
        "title": [f[1] for f in FILMS],
        "year": pa.array([f[2] for f in FILMS], i32),
        "runtime_min": pa.array([101, 95, 130], i32),
        "imdb_rating": [7.1, 6.4, 8.0],
        "age_suitability": ["13+", "10+", "15+"],
        "kim_url": [f"https://kim.example/{f[0]}" for f in FILMS],
        "csm_url": [f"https://csm.example/{f[0]}" for f in FILMS],
    }
    if with_split:
        films["split"] = [f[3] for f in FILMS]
        films["stratum"] = ["1990s|13+", "2000s|10+", "2010s|15+"]
    ratings = {"imdb_id": [], "country": [], "label": [], "minimum_age": [], "ordinal": [], "raw": [], "rule": []}
    tracks = {k: [] for k in ("track_id", "imdb_id", "language", "provider", "file_id", "raw_sha256",
                              "download_count", "encoding", "decoder", "status", "n_entries", "n_repairs",
                              "first_start_ms", "last_end_ms", "n_tokens")}
    entries = {k: [] for k in ("track_id", "imdb_id", "language", "index", "timeframe", "start_ms",
                               "end_ms", "content")}
    safety = {k: [] for k in ("imdb_id", "category", "occurrence_count", "evidence_line_count", "evidence_indices")}
    sanit = {k: [] for k in ("track_id", "imdb_id", "language", "index", "action", "reasons", "sha256")}
    for imdb, _title, _year, _split in FILMS:
        for country, label, age in (("Australia", "M", 15), ("Brazil", "14", 14)):
            for k, v in zip(ratings, (imdb, country, label, age, age // 5, label, "table")):
                ratings[k].append(v)
        for lang in LANGS:
            tid = f"{imdb}-{lang}"
            for k, v in zip(tracks, (tid, imdb, lang, "opensubtitles", f"f{tid}", "0" * 64, 10, "utf-8",
                                     "utf-8", "ok", 2, 0, 1000, 4000, 6)):
                tracks[k].append(v)
            for idx in (1, 2):
                s = idx * 1000
                for k, v in zip(entries, (tid, imdb, lang, idx, f"00:00:0{idx},000 --> 00:00:0{idx + 1},000",
                                          s, s + 1000, f"{lang} line {idx}")):
                    entries[k].append(v)
        for k, v in zip(safety, (imdb, "mildObscenity", 1, 1, "[2]")):
            safety[k].append(v)
        for k, v in zip(sanit, (f"{imdb}-en", imdb, "en", 1, "redact_email", '["email"]', "1" * 64)):
            sanit[k].append(v)
    schema_types = {"minimum_age": i32, "ordinal": i32, "download_count": i64, "n_entries": i32,
                    "n_repairs": i32, "first_start_ms": i64, "last_end_ms": i64, "n_tokens": i64,
                    "index": i64, "start_ms": i64, "end_ms": i64, "occurrence_count": i32,
                    "evidence_line_count": i32}

    def table(cols: dict) -> pa.Table:
        return pa.table({k: pa.array(v, schema_types.get(k)) if isinstance(v, list) else v
                         for k, v in cols.items()})

    funnel = pa.table({"gate_no": pa.array([1, 2], i32), "gate": ["resolve", "tracks"],
                       "kept": pa.array([4, 3], i64), "dropped": pa.array([1, 1], i64),
                       "reasons": ['{"no_imdb": 1}', '{"missing_language": 1}']})
    coverage = pa.table({"dimension": ["decade"], "k": pa.array([1], i32), "method": ["greedy"],
                         "attributes": ['["1990s","2000s","2010s"]'], "films": pa.array([3], i64),
                         "score": pa.array([3], i64)})
    return {"films": table(films), "ratings": table(ratings), "tracks": table(tracks),
            "entries": table(entries), "language_safety": table(safety), "funnel": funnel,
            "coverage": coverage, "sanitization_log": table(sanit), "task_references": _task_references()}


CAST = pa.list_(pa.struct([("actor", pa.string()), ("characters", pa.list_(pa.string())),
                           ("additional_texts", pa.list_(pa.string()))]))
TASK_REFS = {  # imdb_id -> (plot, genres, full_cast); genres withheld (null) for none here
    "tt0000001": ("A storm. Ünïcode „quoted”.", ["Drama", "Thriller"],
                  [{"actor": "Ann Lee", "characters": ["Mara", "Young Mara"], "additional_texts": ["(voice)"]},
                   {"actor": "Bo Ray", "characters": [], "additional_texts": []}]),
    "tt0000002": ("A debt.", ["Crime"], [{"actor": "Cy Dunn", "characters": ["Vic"], "additional_texts": []}]),
    "tt0000003": ("A friendship.", [], []),
}


def _task_references() -> pa.Table:
    strings = pa.list_(pa.string())
    ids = [f[0] for f in FILMS]
    return pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), "imdb_id": ids,
        "plot": [TASK_REFS[i][0] for i in ids], "synopsis": [f"Synopsis of {i}." for i in ids],
        "storyline": [None, "A storyline.", "Another."], "key_message": ["Be kind.", "Pay debts.", "Trust."],
        "genres": pa.array([TASK_REFS[i][1] for i in ids], strings),
        "topics": pa.array([["storm"], ["debt", "crime"], []], strings),
        "age_suitability": ["13+", "10+", "15+"],
        "full_cast": pa.array([TASK_REFS[i][2] for i in ids], CAST),
        "countries_of_origin": pa.array([["United States"], ["France", "Belgium"], ["Iran"]], strings),
        "original_languages": pa.array([["English"], ["French"], ["Persian", "English"]], strings),
    })


def _entity(n: int, imdb: str, title: str, year: int) -> dict:
    return {
        "id": n, "title": title, "releaseYear": year, "duration": 100,
        "sources": {"imdbLink": f"https://www.imdb.com/title/{imdb}/",
                    "commonSenseLink": f"https://csm.example/{imdb}", "kidsInMindLink": f"https://kim.example/{imdb}"},
        "subtitles": [
            {"language": name, "downloadCount": 10,
             "entries": [{"index": 1, "timeframe": "00:00:01,000 --> 00:00:02,000", "content": f"{code} ünï"}]}
            for name, code in (("Arabic (ar)", "ar"), ("English (en)", "en"))
        ],
    }


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_release(root: Path, *, with_split: bool = True, version: str = "1.2.0") -> Path:
    rel = root / "releases" / version
    rel.mkdir(parents=True)
    files: dict[str, dict] = {}
    for name, t in _tables(with_split).items():
        p = rel / f"{name}.parquet"
        pq.write_table(t, p, compression="zstd")
        files[p.name] = {"rows": t.num_rows}
    with open(rel / "films.jsonl", "w", encoding="utf-8") as fh:
        for n, (imdb, title, year, _s) in enumerate(FILMS, start=1):
            fh.write(json.dumps(_entity(n, imdb, title, year), ensure_ascii=False) + "\n")
    files["films.jsonl"] = {"rows": len(FILMS)}
    for name in files:
        files[name].update({"sha256": _sha(rel / name), "size": (rel / name).stat().st_size})
    manifest = {"name": "cinesub", "version": version, "previous": None, "change": "initial",
                "code_version": "0.1.0", "config_hash": "abc123", "inputs": {"sample_world": "f" * 64},
                "files": files}
    (rel / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return rel


def _manifest(rel: Path) -> dict:
    return json.loads((rel / "manifest.json").read_text())


def _schemas(rel: Path) -> dict[str, pa.Schema]:
    return {p.stem: pq.read_schema(p) for p in sorted(rel.glob("*.parquet"))}


def _write(rel: Path) -> Path:
    m = _manifest(rel)
    return write_croissant(rel, m, table_schemas=_schemas(rel), description="Tiny cinesub test release.",
                           license="cc-by-nc-4.0", url="https://example.org/cinesub", version=m["version"],
                           date_published="2026-03-01", rai={})


def _card(rel: Path, schemas: dict | None = None) -> str:
    m = _manifest(rel)
    tables = ["films"] + sorted(t for t in _schemas(rel) if t != "films")
    return render_card(m, tables=tables, stats={"films": 3, "tokens": {"en": {"mean": 6.0}}},
                       license="cc-by-nc-4.0", version=m["version"], pretty_name="CineSub test",
                       table_schemas=schemas if schemas is not None else _schemas(rel))


def _front_matter(card: str) -> dict:
    assert card.startswith("---\n")
    head, _body = card[4:].split("\n---\n", 1)
    return yaml.safe_load(head)


@pytest.fixture
def release(tmp_path) -> Path:
    return make_release(tmp_path)


@pytest.fixture
def no_network(monkeypatch):
    """Any connection other than loopback fails the test."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and self.family != socket.AF_UNIX:
            raise AssertionError(f"network access attempted: {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


# ---------------------------------------------------------------- Croissant

def test_croissant_validates_with_mlcroissant_and_reads_films(release, caplog):
    import mlcroissant as mlc

    path = _write(release)
    doc = json.loads(path.read_text())
    with caplog.at_level(logging.WARNING):
        ds = mlc.Dataset(jsonld=str(path))
    assert "not standard" not in caplog.text
    assert ds.metadata.ctx.issues.errors == set()
    assert ds.metadata.ctx.issues.warnings == set(), ds.metadata.ctx.issues.report()
    got = sorted(r["films/imdb_id"].decode() for r in ds.records("films"))
    assert got == [f[0] for f in FILMS]
    entries = list(ds.records("entries"))
    assert len(entries) == len(FILMS) * len(LANGS) * 2

    assert "http://mlcommons.org/croissant/1.0" in doc["conformsTo"]
    for prop in RAI_REQUIRED:
        assert doc.get(f"rai:{prop}") not in (None, "", []), prop
    assert doc["rai:hasSyntheticData"] is True  # built from the synthetic sample world
    assert "7 days" in doc["rai:dataReleaseMaintenancePlan"]
    assert "major" in doc["rai:dataReleaseMaintenancePlan"]
    assert any("sanitization_log" in t for t in doc["rai:personalSensitiveInformation"])
    assert doc["license"] == "https://creativecommons.org/licenses/by-nc/4.0/"

    manifest = _manifest(release)
    dist = {d["contentUrl"]: d for d in doc["distribution"]}
    assert set(dist) == {n for n in manifest["files"] if n.endswith((".parquet", ".jsonl"))}
    assert all(dist[n]["sha256"] == manifest["files"][n]["sha256"] for n in dist)
    assert dist["films.jsonl"]["encodingFormat"] == "application/jsonlines"
    assert dist["films.parquet"]["encodingFormat"] == "application/x-parquet"

    rs = {r["name"]: r for r in doc["recordSet"]}
    assert rs["films"]["key"] == {"@id": "films/imdb_id"}
    assert rs["tracks"]["key"] == {"@id": "tracks/track_id"}
    assert rs["entries"]["key"] == [{"@id": "entries/track_id"}, {"@id": "entries/index"}]
    types = {f["name"]: f["dataType"] for f in rs["films"]["field"]}
    assert types["year"] == "sc:Integer" and types["imdb_rating"] == "sc:Float" and types["title"] == "sc:Text"
    assert [f["name"] for f in rs["entries"]["field"]] == _schemas(release)["entries"].names
    assert rs["entries"]["field"][3]["source"] == {"fileObject": {"@id": "entries.parquet"},
                                                  "extract": {"column": "index"}}


def test_croissant_tampered_file_fails_mlcroissant_checksum(release):
    import mlcroissant as mlc

    path = _write(release)
    pq.write_table(pa.table({"id": [9]}), release / "films.parquet")  # bytes no longer match sha256
    ds = mlc.Dataset(jsonld=str(path))
    with pytest.raises(Exception) as e:
        list(ds.records("films"))
    chain, exc = [], e.value
    while exc is not None:
        chain.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    assert any("Hash of downloaded file" in m for m in chain), chain


def test_croissant_rejects_bad_inputs(release):
    m = _manifest(release)
    kw = dict(table_schemas=_schemas(release), description="d", license="cc-by-4.0", url="https://x.org",
              date_published=None)
    with pytest.raises(CroissantError) as e:
        build_croissant(release, m, version="1.0", rai={}, **kw)
    assert e.value.reason == "version_not_semver"
    with pytest.raises(CroissantError) as e:
        build_croissant(release, m, version="1.0.0", rai={"rai:dataBias": "typo"}, **kw)
    assert e.value.reason == "rai_unknown_property"
    with pytest.raises(CroissantError) as e:
        build_croissant(release, m, version="1.0.0", rai={"dataSocialImpact": ["a", "b"]}, **kw)
    assert e.value.reason == "rai_cardinality"
    (release / "tracks.parquet").unlink()
    with pytest.raises(CroissantError) as e:
        build_croissant(release, m, version="1.0.0", rai={}, **kw)
    assert e.value.reason == "file_missing"


def test_croissant_rai_overrides_and_type_mapping(release):
    m = _manifest(release)
    doc = build_croissant(release, m, table_schemas=_schemas(release), description="d", license="mit",
                          url="https://x.org", version="2.0.1", date_published=None,
                          rai={"rai:hasSyntheticData": False, "dataBiases": ["only this"]})
    assert doc["rai:hasSyntheticData"] is False and doc["rai:dataBiases"] == ["only this"]
    assert "datePublished" not in doc and doc["version"] == "2.0.1"
    assert arrow_to_croissant_type(pa.date32()) == "sc:Date"
    assert arrow_to_croissant_type(pa.bool_()) == "sc:Boolean"
    assert arrow_to_croissant_type(pa.int32()) == "sc:Integer"
    assert arrow_to_croissant_type(pa.float32()) == "sc:Float"
    assert arrow_to_croissant_type(pa.large_string()) == "sc:Text"


# ---------------------------------------------------------------- HF card

def test_card_front_matter_and_configs(release):
    card = _card(release)
    meta = _front_matter(card)
    assert meta["license"] == "cc-by-nc-4.0"
    assert meta["pretty_name"] == "CineSub test"
    assert meta["language"] == ["en", "ar", "id", "fa", "ro", "vi"]
    assert {"text-generation", "text-classification", "summarization"} <= set(meta["task_categories"])
    assert meta["size_categories"] == ["n<1K"]
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == set(_schemas(release))
    assert [c["config_name"] for c in meta["configs"] if c.get("default")] == ["films"]
    for c in meta["configs"]:
        (df,) = c["data_files"]
        assert df["split"] == "train" and (release / df["path"]).is_file()
    for section in ("## Structure", "## Versioning", "## Withdrawal policy", "## How to load",
                    "## Citation", "## Limitations", "duckdb", "polars", "load_dataset"):
        assert section in card, section
    assert "7 days" in card and "`heldback`" in card and "| `split` |" in card
    assert "| tokens.en.mean | 6 |" in card
    assert "synthetic sample world" in card  # manifest inputs name the sample world


def test_card_without_split_column_has_no_split_note(tmp_path):
    rel = make_release(tmp_path, with_split=False)
    card = _card(rel)
    assert "heldback" not in card
    assert _front_matter(card)["configs"][0] == {
        "config_name": "films", "data_files": [{"split": "train", "path": "films.parquet"}], "default": True}


def test_croissant_and_card_bytes_are_deterministic(release, tmp_path):
    first = _write(release).read_bytes()
    card1 = _card(release)
    assert _write(release).read_bytes() == first
    assert _card(release) == card1
    assert first.endswith(b"}\n")
    # the same release content in another directory gives the same bytes
    other = make_release(tmp_path / "other")
    assert _write(other).read_bytes() == first and _card(other) == card1


# ---------------------------------------------------------------- export

def _load_hf(hf_dir: Path, name: str, cache: Path, monkeypatch):
    import datasets
    import huggingface_hub.constants as hub_constants

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True, raising=False)
    datasets.disable_progress_bars()
    return datasets.load_dataset(str(hf_dir), name=name, split="train", cache_dir=str(cache))


def test_hf_export_loads_offline_with_datasets(release, tmp_path, monkeypatch, no_network):
    import mlcroissant as mlc

    _write(release)  # as publish() does: the export reuses its licence, url, date and RAI texts
    hf_dir = export_release(release, tmp_path / "hf", "hf")
    assert {"README.md", "croissant.json", "films.parquet", "entries.parquet", "export_manifest.json"} <= {
        p.name for p in hf_dir.iterdir()}
    films = _load_hf(hf_dir, "films", tmp_path / "cache", monkeypatch)
    assert films.num_rows == 3 and sorted(films["imdb_id"]) == [f[0] for f in FILMS]
    entries = _load_hf(hf_dir, "entries", tmp_path / "cache", monkeypatch)
    assert entries.num_rows == 12
    ds = mlc.Dataset(jsonld=str(hf_dir / "croissant.json"))
    assert ds.metadata.ctx.issues.warnings == set(), ds.metadata.ctx.issues.report()
    assert len(list(ds.records("films"))) == 3
    cj = json.loads((hf_dir / "croissant.json").read_text())
    assert cj["datePublished"] == "2026-03-01" and cj["description"] == "Tiny cinesub test release."
    assert "films.jsonl" not in {d["name"] for d in cj["distribution"]}
    em = json.loads((hf_dir / "export_manifest.json").read_text())
    for name, entry in em["files"].items():
        assert _sha(hf_dir / name) == entry["sha256"], name
    assert not list(tmp_path.glob(".tmp-export-*"))


def test_json_export_array_equals_jsonl(release, tmp_path):
    out = export_release(release, tmp_path / "json", "json")
    lines = [json.loads(line) for line in (out / "films.jsonl").read_text(encoding="utf-8").splitlines()]
    with open(out / "films.json", encoding="utf-8") as fh:
        arr = json.load(fh)
    assert arr == lines and len(arr) == 3
    assert (out / "films.jsonl").read_bytes() == (release / "films.jsonl").read_bytes()
    em = json.loads((out / "export_manifest.json").read_text())
    assert em["files"]["films.json"]["rows"] == 3 and em["format"] == "json"
    assert em["files"]["films.json"]["sha256"] == _sha(out / "films.json")


def test_parquet_export_copies_tables_and_manifest(release, tmp_path):
    out = export_release(release, tmp_path / "pq", "parquet")
    m = json.loads((out / "manifest.json").read_text())
    for name in _schemas(release):
        assert (out / f"{name}.parquet").read_bytes() == (release / f"{name}.parquet").read_bytes()
        assert m["files"][f"{name}.parquet"]["sha256"] == _manifest(release)["files"][f"{name}.parquet"]["sha256"]
    assert m["version"] == "1.2.0" and m["export"]["public_only"] is False


def test_public_only_drops_heldback_films_everywhere(release, tmp_path, monkeypatch, no_network):
    pq_out = export_release(release, tmp_path / "pq", "parquet", public_only=True)
    for p in pq_out.glob("*.parquet"):
        t = pq.read_table(p)
        if "imdb_id" in t.column_names:
            ids = set(t.column("imdb_id").to_pylist())
            assert ids and not ids & HELD, p.name
            assert ids <= {f[0] for f in FILMS}
    assert pq.read_table(pq_out / "films.parquet").num_rows == 2
    assert pq.read_table(pq_out / "entries.parquet").num_rows == 8
    assert pq.read_table(pq_out / "funnel.parquet").num_rows == 2  # corpus aggregate kept
    em = json.loads((pq_out / "export_manifest.json").read_text())
    assert em["dropped_rows"]["films.parquet"] == 1 and em["dropped_rows"]["entries.parquet"] == 4
    assert json.loads((pq_out / "manifest.json").read_text())["files"]["films.parquet"]["rows"] == 2

    js_out = export_release(release, tmp_path / "js", "json", public_only=True)
    arr = json.loads((js_out / "films.json").read_text(encoding="utf-8"))
    assert [e["title"] for e in arr] == ["Alpha", "Gamma"]
    assert len((js_out / "films.jsonl").read_text().splitlines()) == 2

    hf_out = export_release(release, tmp_path / "hf", "hf", public_only=True)
    films = _load_hf(hf_out, "films", tmp_path / "cache", monkeypatch)
    assert sorted(films["imdb_id"]) == ["tt0000001", "tt0000003"]
    assert "public: 2" in (hf_out / "README.md").read_text()


def test_public_only_needs_a_split_column(tmp_path):
    rel = make_release(tmp_path, with_split=False)
    with pytest.raises(ExportError) as e:
        export_release(rel, tmp_path / "out", "parquet", public_only=True)
    assert e.value.reason == "no_split_column"
    assert not (tmp_path / "out").exists()


def test_export_refuses_non_empty_out_and_accepts_empty(release, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="out_not_empty"):
        export_release(release, out, "json")
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert not list(tmp_path.glob(".tmp-export-*"))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert export_release(release, empty, "json") == empty
    assert (empty / "films.json").is_file()
    with pytest.raises(ExportError) as e:
        export_release(release, tmp_path / "x", "csv")  # type: ignore[arg-type]
    assert e.value.reason == "unknown_format"


def test_export_detects_corrupted_release_file(release, tmp_path):
    with open(release / "films.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(_entity(4, "tt0000004", "Delta", 2020)) + "\n")
    with pytest.raises(ExportError) as e:
        export_release(release, tmp_path / "out", "json")
    assert e.value.reason == "checksum_mismatch"
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".tmp-export-*"))


def test_hf_export_bytes_are_deterministic(release, tmp_path):
    a = export_release(release, tmp_path / "a", "hf")
    b = export_release(release, tmp_path / "b", "hf")
    for name in ("README.md", "croissant.json", "export_manifest.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


# ---------------------------------------------------------------- task references (issue 14, point 9)

def _decode(v):
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if isinstance(v, dict):
        return {k.rsplit("/", 1)[-1]: _decode(x) for k, x in v.items()}
    return v


def test_croissant_task_references_record_set_is_typed_and_loads(release, caplog):
    import mlcroissant as mlc

    path = _write(release)
    doc = json.loads(path.read_text())
    rs = {r["name"]: r for r in doc["recordSet"]}["task_references"]
    assert rs["key"] == {"@id": "task_references/imdb_id"}
    fields = {f["name"]: f for f in rs["field"]}
    assert list(fields) == _schemas(release)["task_references"].names
    for name in ("genres", "topics", "countries_of_origin", "original_languages"):
        assert fields[name]["repeated"] is True and fields[name]["dataType"] == "sc:Text", name
    assert "repeated" not in fields["plot"] and fields["id"]["dataType"] == "sc:Integer"
    cast = fields["full_cast"]
    assert cast["repeated"] is True and "dataType" not in cast
    subs = {f["name"]: f for f in cast["subField"]}
    assert list(subs) == ["actor", "characters", "additional_texts"]
    assert subs["characters"]["repeated"] is True and "repeated" not in subs["actor"]
    assert subs["actor"]["source"] == {"fileObject": {"@id": "task_references.parquet"},
                                       "extract": {"column": "full_cast"}, "transform": {"jsonPath": "actor"}}

    with caplog.at_level(logging.WARNING):
        ds = mlc.Dataset(jsonld=str(path))
    assert ds.metadata.ctx.issues.errors == set()
    assert ds.metadata.ctx.issues.warnings == set(), ds.metadata.ctx.issues.report()
    got = {r["imdb_id"]: r for r in (_decode(rec) for rec in ds.records("task_references"))}
    want = {r["imdb_id"]: r for r in pq.read_table(release / "task_references.parquet").to_pylist()}
    assert got == want  # every column, lists and the cast structs included


def test_hf_export_task_references_keep_typed_lists(release, tmp_path, monkeypatch, no_network):
    import datasets

    _write(release)
    hf_dir = export_release(release, tmp_path / "hf", "hf")
    card = (hf_dir / "README.md").read_text()
    assert "task_references" in {c["config_name"] for c in _front_matter(card)["configs"]}
    refs = _load_hf(hf_dir, "task_references", tmp_path / "cache", monkeypatch)
    feats = refs.features
    assert isinstance(feats["genres"], tuple(getattr(datasets, n) for n in ("Sequence", "List") if hasattr(datasets, n)))
    assert feats["genres"].feature.dtype == "string"
    want = pq.read_table(release / "task_references.parquet").to_pylist()
    assert sorted(refs.to_list(), key=lambda r: r["id"]) == want

    pub = export_release(release, tmp_path / "pub", "hf", public_only=True)
    pub_refs = _load_hf(pub, "task_references", tmp_path / "cache2", monkeypatch)
    assert sorted(pub_refs["imdb_id"]) == ["tt0000001", "tt0000003"]


def test_card_describes_task_references(release):
    card = _card(release)
    assert "`task_references` holds the benchmark targets" in card
    assert 'name="task_references"' in card
    assert "| `full_cast` | list<" in card  # typed list column in the structure section
