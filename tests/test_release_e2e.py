"""Issue 8 end to end: a real `cinesub build --sample`, then the release as researchers and
curators use it — duckdb, polars, `datasets`, JSON Schema, mlcroissant — and the curator
commands (diff, withdraw, export), the consistency gate blocking a bad release, frozen splits
and stable ids across a withdrawal and a rebuild."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import jsonschema
import polars as pl
import pytest
import yaml

from tests._cli_runner import cli_env, copy_home
from tests.test_build_sample import _build, default_build

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cinesub.cli"]

pytestmark = pytest.mark.slow


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + list(args), cwd=REPO, env=cli_env(home), capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def release():
    """The default sample build shared with tests/test_build_sample.py (read only: a test that
    writes works on a copy of the home)."""
    home, summary, _ = default_build()
    return home, Path(summary["release"]["path"]), summary


def test_release_has_every_artifact_listed_in_the_manifest(release):
    _, rel, _ = release
    man = json.loads((rel / "manifest.json").read_text())
    expected = {f"{t}.parquet" for t in ("films", "ratings", "tracks", "entries", "language_safety", "funnel",
                                         "coverage", "flags", "sanitization_log", "task_references")}
    expected |= {"films.jsonl", "films.schema.json", "cinesub.duckdb", "croissant.json", "README.md",
                 "statistics.html"}
    assert expected <= set(man["files"])
    import hashlib
    for name, meta in man["files"].items():
        data = (rel / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == meta["sha256"], name
        assert len(data) == meta["size"], name
    on_disk = {str(p.relative_to(rel)) for p in rel.rglob("*") if p.is_file()} - {"manifest.json"}
    assert on_disk == set(man["files"]), "every file is in the manifest and nothing else is there"


def test_release_loads_with_duckdb_and_polars(release):
    from warehouse.load import open_release

    _, rel, summary = release
    moved = rel.parent.parent / "moved-copy"
    shutil.copytree(rel, moved)  # views use relative paths: the release can move
    con = open_release(moved)
    try:
        n_films = con.sql("SELECT count(*) FROM films").fetchall()[0][0]
        n_entries = con.sql("SELECT count(*) FROM entries").fetchall()[0][0]
        per_film = con.sql("SELECT count(*) FROM tracks GROUP BY imdb_id").fetchall()
        core = con.sql("SELECT * FROM stats_core").fetchall()
    finally:
        con.close()
    assert n_films == summary["films"] and n_entries == summary["entries"]
    assert {r[0] for r in per_film} == {6}
    assert core
    films = pl.read_parquet(moved / "films.parquet")
    assert films.height == n_films and films["id"].is_unique().all()
    assert pl.read_parquet(moved / "entries.parquet").height == n_entries


def test_release_loads_with_datasets(release, tmp_path):
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets

    _, rel, summary = release
    card = (rel / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    names = {c["config_name"] for c in front["configs"]}
    assert {"films", "tracks", "entries", "ratings"} <= names
    films = datasets.load_dataset(str(rel), name="films", cache_dir=str(tmp_path / "hf"))
    split = next(iter(films.values()))
    assert split.num_rows == summary["films"]
    assert set(split.column_names) >= {"id", "imdb_id", "title", "split"}


def test_entities_validate_against_the_json_schema(release):
    _, rel, summary = release
    schema = json.loads((rel / "films.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    n = 0
    with open(rel / "films.jsonl", encoding="utf-8") as fh:
        for line in fh:
            entity = json.loads(line)
            errors = list(validator.iter_errors(entity))
            assert not errors, (entity["id"], [e.message for e in errors[:3]])
            n += 1
    assert n == summary["films"]
    bad = json.loads((rel / "films.jsonl").read_text().splitlines()[0])
    bad["subtitles"][0]["entries"][0]["timeframe"] = "1:2:3"
    assert list(validator.iter_errors(bad)), "the schema rejects a malformed time code"


def test_croissant_validates_with_mlcroissant(release):
    import mlcroissant as mlc

    _, rel, summary = release
    ds = mlc.Dataset(jsonld=str(rel / "croissant.json"))
    meta = json.loads((rel / "croissant.json").read_text())
    assert meta["version"] == rel.name
    assert any(k.startswith("rai:") for k in meta), "responsible-AI fields present"
    ids = [r for r in ds.records("films")]
    assert len(ids) == summary["films"]


#: task_references column -> films.jsonl field (issue 14 point 9)
TASK_REFERENCE_FIELDS = {
    "plot": "plot", "synopsis": "synopsis", "storyline": "storyline", "key_message": "keyMessage",
    "genres": "genres", "topics": "topics", "age_suitability": "ageSuitabilityRating", "full_cast": "fullCast",
    "countries_of_origin": "countriesOfOrigin", "original_languages": "originalLanguages",
}


def _entity_refs(rel: Path) -> dict[str, dict]:
    """imdb_id -> {id, task_references column: the films.jsonl value}."""
    out = {}
    with open(rel / "films.jsonl", encoding="utf-8") as fh:
        for line in fh:
            e = json.loads(line)
            refs = {col: e[field] for col, field in TASK_REFERENCE_FIELDS.items()}
            refs["full_cast"] = [{"actor": m["actor"], "characters": m["characters"],
                                  "additional_texts": m["additionalTexts"]} for m in e["fullCast"]]
            out[e["sources"]["imdbLink"].split("/")[-2]] = {"id": e["id"], "imdb_id": e["sources"]["imdbLink"].split("/")[-2],
                                                            **refs}
    return out


def test_task_references_table_equals_the_entities(release, tmp_path):
    """The benchmark targets are a typed table that Polars, DuckDB, `datasets` and mlcroissant
    read, with the values of films.jsonl for every film."""
    import mlcroissant as mlc

    from warehouse.export import export_release
    from warehouse.load import open_release

    _, rel, summary = release
    man = json.loads((rel / "manifest.json").read_text())
    assert man["files"]["task_references.parquet"]["rows"] == summary["films"]
    want = _entity_refs(rel)
    assert len(want) == summary["films"]

    refs = pl.read_parquet(rel / "task_references.parquet")
    assert refs.schema["genres"] == pl.List(pl.String) and refs.schema["topics"] == pl.List(pl.String)
    assert isinstance(refs.schema["full_cast"], pl.List)
    got = {r["imdb_id"]: r for r in refs.to_dicts()}
    assert got == want
    assert any(r["plot"] for r in got.values()) and any(r["full_cast"] for r in got.values())

    con = open_release(rel)
    try:
        n, n_genres = con.sql("SELECT count(*), sum(len(genres)) FROM task_references").fetchall()[0]
        joined = con.sql("SELECT count(*) FROM task_references r JOIN films f USING (imdb_id, id)").fetchall()[0][0]
    finally:
        con.close()
    assert n == joined == summary["films"]
    assert n_genres == sum(len(r["genres"] or []) for r in want.values())

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets

    hf = export_release(rel, tmp_path / "hf", "hf")
    ds = datasets.load_dataset(str(hf), name="task_references", split="train", cache_dir=str(tmp_path / "cache"))
    assert {r["imdb_id"]: r for r in ds.to_list()} == want

    def decode(v):
        if isinstance(v, bytes):
            return v.decode("utf-8")
        if isinstance(v, list):
            return [decode(x) for x in v]
        if isinstance(v, dict):
            return {k.rsplit("/", 1)[-1]: decode(x) for k, x in v.items()}
        return v

    cro = mlc.Dataset(jsonld=str(rel / "croissant.json"))
    records = {r["imdb_id"]: r for r in (decode(x) for x in cro.records("task_references"))}
    assert records == want


def test_splits_are_stratified_and_recorded(release):
    _, rel, _ = release
    films = pl.read_parquet(rel / "films.parquet")
    assert set(films["split"].unique()) <= {"public", "heldback"}
    from warehouse.public_sample import public_count

    man = json.loads((rel / "manifest.json").read_text())
    share = man["splits"]["public_share"]
    per = films.group_by("stratum").agg(pl.len().alias("n"), (pl.col("split") == "public").sum().alias("pub"))
    assert per.height >= 2 and per["n"].min() >= man["splits"]["min_stratum_size"]
    # stratified, and the small cells were merged (the sample has mostly one film per decade×age cell)
    assert sum(len(r["cells"]) for r in man["splits"]["per_stratum"]) > per.height
    for row in per.iter_rows(named=True):  # every stratum covered, each keeps a held-back part
        assert row["pub"] == public_count(row["n"], share) and 1 <= row["pub"] < row["n"], row
    assert man["splits"]["public"] == int((films["split"] == "public").sum())
    assert man["splits"]["public"] < films.height / 2  # not 20 of 27 as the per-cell overlap rule gave
    recorded = {r["stratum"]: (r["n"], r["public"], r["heldback"]) for r in man["splits"]["per_stratum"]}
    assert recorded == {r["stratum"]: (r["n"], r["pub"], r["n"] - r["pub"]) for r in per.iter_rows(named=True)}


def test_statistics_page_and_tables(release):
    _, rel, summary = release
    html = (rel / "statistics.html").read_text()
    assert html.count("<svg") >= 5 and "http://" not in html.split("<svg")[0].lower().replace("http://www.w3.org", "")
    stats = json.loads((rel / "stats" / "statistics.json").read_text())
    assert stats, "statistics.json is not empty"
    core = pl.read_parquet(rel / "stats" / "core.parquet")
    flat = json.dumps(core.to_dicts())
    assert str(summary["films"]) in flat and str(summary["entries"]) in flat


def test_gate_blocks_a_bad_release_and_writes_a_report(release, tmp_path):
    """A cohort film loses one national rating: the gate blocks publication, the report names
    the film and the check, and the latest release stays as it was."""
    from cinesub.settings import load_settings
    from warehouse.release import ReleaseBlocked, latest_version, publish

    home, rel, _ = release
    work = tmp_path / "home"
    work.mkdir()
    shutil.copy(home / "state.duckdb", work / "state.duckdb")
    shutil.copytree(home / "releases", work / "releases", symlinks=True)
    before = latest_version(work / "releases")
    settings = load_settings(None, work)
    con = duckdb.connect(str(work / "state.duckdb"))
    try:
        victim = con.execute("SELECT imdb_id FROM ratings ORDER BY imdb_id LIMIT 1").fetchall()[0][0]
        con.execute("DELETE FROM ratings WHERE imdb_id = ? AND country = 'Germany'", [victim])
        with pytest.raises(ReleaseBlocked) as info:
            publish(con, work / "releases", config_hash="x", inputs={}, countries=tuple(settings.countries),
                    languages=tuple(settings.languages), release_settings=settings.release,
                    reports_dir=work / "reports")
    finally:
        con.close()
    report = json.loads(Path(info.value.report).read_text())
    text = json.dumps(report)
    assert victim in text and "ratings_count" in text
    assert latest_version(work / "releases") == before
    assert not [p for p in (work / "releases").iterdir() if p.name.startswith(".tmp")]


def test_stage_stats_are_published_but_never_make_a_new_version(release, tmp_path):
    """The build's per-stage statistics land in stats/stages.parquet with their checksum in the
    manifest (and Croissant); other seconds on the same data publish no new version."""
    import hashlib

    import pyarrow.parquet as pq

    from cinesub.settings import load_settings
    from warehouse.publish import STAGE_STATS_FILE, STAGE_STATS_SCHEMA
    from warehouse.release import publish

    home, _, _ = release
    work = tmp_path / "home"
    work.mkdir()
    shutil.copy(home / "state.duckdb", work / "state.duckdb")
    settings = load_settings(None, work)

    def stats(seconds: float) -> list[dict]:
        return [{"flow": "build-cinesub", "stage": "process", "status": "completed", "items_in": 30,
                 "items_out": 27, "dropped": {"decode_failed": 2, "internal_error": 1}, "seconds": seconds}]

    def pub(con, seconds: float) -> dict:
        return publish(con, work / "releases", config_hash="x", inputs={}, countries=tuple(settings.countries),
                       languages=tuple(settings.languages), release_settings=settings.release,
                       reports_dir=work / "reports", stage_stats=stats(seconds))

    with duckdb.connect(str(work / "state.duckdb")) as con:
        first = pub(con, 12.5)
        again = pub(con, 99.0)
    assert first["new"] and (again["version"], again["new"], again["kind"]) == (first["version"], False, None)
    rel = Path(first["path"])
    table = pq.read_table(rel / STAGE_STATS_FILE)
    assert table.schema.equals(STAGE_STATS_SCHEMA)
    assert table.to_pylist() == [{"flow": "build-cinesub", "stage": "process", "status": "completed",
                                  "items_in": 30, "items_out": 27, "seconds": 12.5,
                                  "dropped": [{"reason": "decode_failed", "count": 2},
                                              {"reason": "internal_error", "count": 1}]}]
    man = json.loads((rel / "manifest.json").read_text())
    assert man["files"][STAGE_STATS_FILE]["sha256"] == hashlib.sha256((rel / STAGE_STATS_FILE).read_bytes()).hexdigest()
    croissant = json.loads((rel / "croissant.json").read_text())
    assert STAGE_STATS_FILE in {d["name"] for d in croissant["distribution"]}
    with duckdb.connect(str(rel / "cinesub.duckdb"), read_only=True) as db:
        names = {r[0] for r in db.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "stats_stages" not in names, "build statistics are not data: not in the release database"


def test_withdraw_diff_export_and_rebuild(release, tmp_path):
    shared_home, shared_rel, summary = release
    home = copy_home(shared_home, tmp_path / "home")
    rel = home / "releases" / shared_rel.name
    films = pl.read_parquet(rel / "films.parquet")
    victim = films.sort("id")["imdb_id"][1]
    ids_before = dict(zip(films["imdb_id"], films["id"]))
    splits_before = dict(zip(films["imdb_id"], films["split"]))
    out = _cli(home, "release", "withdraw", victim, "--reason", "rights holder request", "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout)
    new_version = res["release"]["version"]
    assert res["release"]["kind"] == "major" and int(new_version.split(".")[0]) == int(rel.name.split(".")[0]) + 1
    new = Path(res["release"]["path"])
    for name in ("films", "tracks", "entries", "ratings", "language_safety", "flags", "sanitization_log",
                 "task_references"):
        t = pl.read_parquet(new / f"{name}.parquet")
        assert victim not in set(t["imdb_id"].to_list()), name
    assert victim not in (new / "films.jsonl").read_text()
    log = [json.loads(x) for x in (home / "releases" / "withdrawals.jsonl").read_text().splitlines()]
    assert [r["imdb_id"] for r in log] == [victim] and log[0]["release_version"] == new_version
    man = json.loads((new / "manifest.json").read_text())
    assert man["withdrawn"] == [victim]
    kept = pl.read_parquet(new / "films.parquet")
    assert dict(zip(kept["imdb_id"], kept["id"])) == {k: v for k, v in ids_before.items() if k != victim}
    assert dict(zip(kept["imdb_id"], kept["split"])) == {k: v for k, v in splits_before.items() if k != victim}

    again = _cli(home, "release", "withdraw", victim, "--reason", "again")
    assert again.returncode == 2 and "already_withdrawn" in again.stderr

    diff = _cli(home, "release", "diff", rel.name, new_version, "--json")
    assert diff.returncode == 0, diff.stderr[-2000:]
    d = json.loads(diff.stdout)
    assert d["films"]["removed"] == [victim] and not d["films"]["added"]
    assert d["change_kind"] == "major"
    assert len(d["tracks"]["removed"]) == 6

    # the next scheduled build leaves the film out and publishes nothing new
    rebuilt = _build(home)
    assert rebuilt["release"]["version"] == new_version and rebuilt["release"]["new"] is False
    assert victim not in set(pl.read_parquet(Path(rebuilt["release"]["path"]) / "films.parquet")["imdb_id"])

    for fmt in ("json", "parquet", "hf"):
        target = tmp_path / f"export-{fmt}"
        ex = _cli(home, "release", "export", "latest", "--format", fmt, "--out", str(target))
        assert ex.returncode == 0, ex.stderr[-2000:]
        assert any(target.iterdir())
    entities = json.loads((tmp_path / "export-json" / "films.json").read_text())
    assert len(entities) == summary["films"] - 1 and victim not in {e["sources"]["imdbLink"] for e in entities}
    pub = tmp_path / "export-public"
    ex = _cli(home, "release", "export", "latest", "--format", "parquet", "--out", str(pub), "--public-only")
    assert ex.returncode == 0, ex.stderr[-2000:]
    pub_films = pl.read_parquet(pub / "films.parquet")
    assert set(pub_films["split"].unique()) == {"public"}
    bad = _cli(home, "release", "export", "latest", "--format", "xml", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2
