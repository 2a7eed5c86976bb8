"""End to end: `cinesub build --sample` (the real CLI, the real Prefect flow) twice into a fresh
CINESUB_HOME, checked against the sample world's ground truth."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest
from _cli_runner import cli_env, shared_build

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cinesub.cli"]

pytestmark = pytest.mark.slow


def _build(home: Path) -> dict:
    proc = subprocess.run(CLI + ["build", "--sample", "--json"], cwd=REPO, env=cli_env(home),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return json.loads(proc.stdout)


def default_build() -> tuple[Path, dict, dict]:
    """`cinesub build --sample` twice into one fresh home (the flow generates the world itself),
    once per test run: this module and tests/test_release_e2e.py read it; nothing writes to it."""
    shared = shared_build("default-x2", films=None, builds=2)
    first, second = (json.loads(r["stdout"]) for r in shared["runs"])
    return shared["home"], first, second


@pytest.fixture(scope="module")
def built():
    home, first, second = default_build()
    manifest = json.loads(next((home / "sample-world").glob("*/manifest.json")).read_text())
    return home, first, second, manifest


def _state(home: Path):
    return duckdb.connect(str(home / "state.duckdb"), read_only=True)


def test_release_written_with_manifest(built):
    home, first, _, _ = built
    rel = Path(first["release"]["path"])
    assert rel.parent == home / "releases" and rel.is_dir()
    assert first["release"]["new"] is True and first["release"]["version"] == "1.0.0"
    man = json.loads((rel / "manifest.json").read_text())
    for name, meta in man["files"].items():
        data = (rel / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == meta["sha256"], name
        assert len(data) == meta["size"]
    assert man["inputs"]["sample_world"]
    assert (home / "releases" / "latest").resolve() == rel.resolve()
    # the Parquet tables load with polars and through the DuckDB views
    films = pl.read_parquet(rel / "films.parquet")
    assert films.height == first["films"] > 0
    con = duckdb.connect(str(rel / "cinesub.duckdb"), read_only=True)
    con.execute(f"SET file_search_path = '{rel}'")
    assert con.execute("SELECT count(*) FROM entries").fetchone()[0] == first["entries"]


def test_funnel_matches_ground_truth(built):
    _, first, _, manifest = built
    got = [(g["gate_no"], g["kept"], g["dropped"]) for g in first["funnel"]]
    want = [(g["gate_no"], g["kept"], g["dropped"]) for g in manifest["funnel"]]
    assert got == want


def test_film_entities_follow_spec(built):
    _, first, _, _ = built
    rel = Path(first["release"]["path"])
    lines = (rel / "films.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == first["films"]
    keys = ["id", "title", "releaseYear", "duration", "imdbRating", "countriesOfOrigin", "originalLanguages",
            "directors", "writers", "topCast", "fullCast", "plot", "synopsis", "storyline", "keyMessage",
            "genres", "topics", "ageSuitabilityRating", "motionPictureRatings", "languageContentReference",
            "languageContentAssessment", "sources", "subtitles"]
    for i, line in enumerate(lines, start=1):
        film = json.loads(line)
        assert list(film) == keys
        assert film["id"] == i
        assert len(film["subtitles"]) == 6
        assert [r["country"] for r in film["motionPictureRatings"]] == [
            "Australia", "Brazil", "France", "Germany", "Netherlands", "Singapore", "South Korea", "Sweden",
            "United Kingdom", "United States"]
        for sub in film["subtitles"]:
            assert len(sub["entries"]) > 500
            assert sub["downloadCount"] > 0
        english = next(s for s in film["subtitles"] if s["language"] == "English (en)")
        en_indices = {e["index"] for e in english["entries"]}
        for cat in film["languageContentAssessment"]["categories"].values():
            assert set(cat["evidenceSubtitleIndices"]) <= en_indices


def test_planted_defects_flagged_on_the_right_layer(built):
    home, _, _, manifest = built
    # SubDL (the recovery provider) serves the same world files as "<sd_id>-<file_id>"
    with _state(home) as con:
        flags = {(r[0], r[1], r[2]): set(r[3].split(",")) for r in con.execute(
            "SELECT imdb_id, language, split_part(file_id, '-', -1), string_agg(DISTINCT layer, ',') FROM flags "
            "WHERE layer NOT IN ('span_ratio','token_ratio','entry_ratio','span_vs_english') GROUP BY 1, 2, 3"
        ).fetchall()}
    planted = {(c["imdb_id"], c["language"], str(c["file_id"])): c["defect_layer"]
               for c in manifest["candidates"] if c.get("defect_layer")}
    assert planted, "the sample world plants defects"
    missed = {k: v for k, v in planted.items() if v not in flags.get(k, set())}
    assert not missed, f"planted defects not flagged: {missed}"
    extra = {k: v for k, v in flags.items() if k not in planted}
    assert not extra, f"flags on candidates without a planted defect: {extra}"
    wrong = {k: (flags[k], v) for k, v in planted.items() if flags[k] != {v}}
    assert not wrong, f"defects flagged with extra layers: {wrong}"


def test_selection_matches_ground_truth(built):
    home, _, _, manifest = built
    with _state(home) as con:
        got = {(r[0], r[1]): r[2] for r in con.execute(
            "SELECT imdb_id, language, file_id FROM selections WHERE status IN ('ok', 'retained')").fetchall()}
    want = {(s["imdb_id"], s["language"]): (str(s["file_id"]) if s["file_id"] is not None else None)
            for s in manifest["expected_selection"]}
    want = {k: v for k, v in want.items() if v is not None}
    assert {k: got.get(k) for k in want} == want


def test_boilerplate_removed_and_emails_redacted(built):
    home, _, _, manifest = built
    with _state(home) as con:
        processed = {(r[0], r[1], r[2]): r[3] for r in con.execute(
            "SELECT imdb_id, language, file_id, track_id FROM tracks WHERE status <> 'rejected'").fetchall()}
        log = {(r[0], r[1]): r[2] for r in con.execute(
            'SELECT track_id, "index", action FROM sanitization_log').fetchall()}
        clean = {(r[0], r[1]): r[2] for r in con.execute(
            'SELECT track_id, "index", clean_content FROM entries '
            "WHERE clean_content IS NULL OR clean_content LIKE '%[email redacted]%'").fetchall()}
    checked = 0
    for b in manifest["boilerplate"]:
        tid = processed.get((b["imdb_id"], b["language"], str(b["file_id"])))
        if tid is None:
            continue
        checked += 1
        assert log.get((tid, b["index"])) == "removed", b
    for e in manifest["emails"]:
        tid = processed.get((e["imdb_id"], e["language"], str(e["file_id"])))
        if tid is None:
            continue
        checked += 1
        assert log.get((tid, e["index"])) == "modified", e
        assert "[email redacted]" in clean[(tid, e["index"])]
    assert checked > 0
    planted = {(processed.get((b["imdb_id"], b["language"], str(b["file_id"]))), b["index"])
               for b in manifest["boilerplate"] + manifest["emails"]}
    assert set(log) <= planted, f"sanitizer touched unplanted entries: {sorted(set(log) - planted)[:10]}"


def test_second_build_reuses_everything(built):
    _, first, second, _ = built
    assert second["work"]["downloaded"] == 0
    assert second["work"]["tracks_processed"] == 0
    assert second["work"]["sample_world_reused"] is True
    assert second["release"]["new"] is False
    assert second["release"]["version"] == first["release"]["version"]
    assert {"inventory", "cohort", "annotate", "release"} <= set(second["work"]["reused_stages"])
    for key in ("films", "tracks", "entries", "funnel", "flags_by_layer"):
        assert second[key] == first[key]


def test_coverage_table_in_release_and_report(built):
    """SPEC A7: the per-K table (exact search beside the frequency prefix) for languages and
    countries is in the release and the report; with K = all six languages it keeps exactly
    the films that pass the language gate."""
    home, first, _, _ = built
    rel = Path(first["release"]["path"])
    cov = pl.read_parquet(rel / "coverage.parquet")
    assert set(cov["dimension"]) == {"languages", "countries"}
    six = cov.filter((pl.col("dimension") == "languages") & (pl.col("k") == 6) & (pl.col("method") == "search"))
    assert six["attributes"][0] == "ar,en,fa,id,ro,vi"
    gate5 = next(g for g in first["funnel"] if g["gate_no"] == 5)
    assert six["films"][0] == gate5["kept"]
    for row in cov.filter(pl.col("method") == "search").iter_rows(named=True):
        prefix = cov.filter((pl.col("dimension") == row["dimension"]) & (pl.col("k") == row["k"])
                            & (pl.col("method") == "prefix"))
        assert row["score"] >= prefix["score"][0]  # the exact search never loses to the baseline
    html = Path(first["report"]["path"]).read_text(encoding="utf-8")
    assert 'id="coverage-k"' in html and "ar,en,fa,id,ro,vi" in html
    assert 'id="safety-discrepancies"' in html and "strongProfanity" in html


def test_task_references_curated_and_completeness_applied(built):
    """SPEC A10: planted production-history sentences are removed from the released synopsis,
    the raw text stays in the curation table, and the completeness rule is recorded."""
    home, first, _, manifest = built
    rel = Path(first["release"]["path"])
    films = {json.loads(line)["sources"]["imdbLink"].rstrip("/").rsplit("/", 1)[1]: json.loads(line)
             for line in (rel / "films.jsonl").read_text(encoding="utf-8").splitlines()}
    planted = {f["imdb_id"]: f["planted_external"] for f in manifest["films"]
               if f.get("planted_external") and f["imdb_id"] in films}
    assert planted, "the sample world plants external sentences in cohort films"
    with _state(home) as con:
        raw = {r[0]: r[1] for r in con.execute(
            "SELECT imdb_id, raw FROM curation WHERE field = 'synopsis'").fetchall()}
        removed = {r[0] for r in con.execute(
            "SELECT imdb_id FROM curation WHERE field = 'synopsis' AND status = 'cleaned'").fetchall()}
        kept = dict(con.execute("SELECT field, kept FROM task_fields").fetchall())
    for imdb_id, sentence in planted.items():
        assert sentence not in films[imdb_id]["synopsis"]
        assert sentence in raw[imdb_id]
    assert removed == set(planted)  # nothing else was cut from any synopsis
    assert kept["plot"] and kept["synopsis"]
    for film in films.values():
        for field, is_kept in kept.items():
            if not is_kept:
                assert film[field] is None


def test_release_list_and_show_commands(built):
    home, first, _, _ = built
    env = dict(os.environ, CINESUB_HOME=str(home))
    out = subprocess.run(CLI + ["release", "list", "--json"], cwd=REPO, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["version"] for r in rows] == ["1.0.0"] and rows[0]["latest"] is True
    assert rows[0]["films"] == first["films"] and rows[0]["entries"] == first["entries"]
    shown = subprocess.run(CLI + ["release", "show", "latest", "--json"], cwd=REPO, env=env,
                           capture_output=True, text=True)
    assert shown.returncode == 0 and json.loads(shown.stdout)["version"] == "1.0.0"
    missing = subprocess.run(CLI + ["release", "show", "9.9.9"], cwd=REPO, env=env, capture_output=True, text=True)
    assert missing.returncode == 2 and "no release 9.9.9" in missing.stderr
