"""Fast rebuilds (docs/rebuilds.md): the provider search cache of the acquire stage (a fresh
search is not repeated, an expired one is, a film whose provider files changed is, and the
candidates are those of a full search) and the "nothing changed" fast path of ``cinesub build``
(flows/kernel_fastpath.py: unchanged → reused; one input byte, a review decision or a tampered
release → the normal build)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from cinesub.rawstore import RawStore
from cinesub.settings import load_settings
from cinesub.state import connect
from fixtures.opensubtitles_server import OpenSubtitlesFixture
from fixtures.subdl_server import SubDLFixture
from flows import kernel_fastpath as fast
from flows.env.sample import SampleEnvironment, sample_credentials
from flows.kernel_context import RunContext
from flows.kernel_exec import execute
from flows.stages.subtitles.acquire import AcquireStage
from flows.stages.subtitles.inventory import InventoryStage
from flows.stages.subtitles.survey import SurveyStage

REPO = Path(__file__).resolve().parent.parent
#: the candidates as a search finds them (SubDL's url carries the loopback port of the fixture,
#: new at every start: metadata only, the download goes to the configured host)
CANDIDATES = ("SELECT * EXCLUDE (url), regexp_replace(url, '127\\.0\\.0\\.1:[0-9]+', 'fixture') FROM candidates "
              "ORDER BY imdb_id, language, provider, file_id")


# --------------------------------------------------------------------------------------------
# the search cache
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def surveyed(world, tmp_path_factory) -> Path:
    """A home with the inventory and the survey of the small world (each test works on a copy)."""
    home = tmp_path_factory.mktemp("surveyed")
    _stage(world, home, InventoryStage(), "inv")
    _stage(world, home, SurveyStage(), "survey")
    return home


def _stage(world: Path, home: Path, stage, run_id: str, **ctx_options):
    """Run one stage against fresh fixture servers; (stats, API searches the servers answered).
    The environment's digest is the run id, so the kernel never reuses the stage itself: what
    is not asked again is the search cache's doing."""
    s = load_settings(home=home)
    creds = sample_credentials(s)
    with OpenSubtitlesFixture(world, api_key=creds["api_key"], username=creds["username"],
                              password=creds["password"]) as os_fx, \
            SubDLFixture(world, api_key=creds["subdl_api_key"]) as sd_fx:
        env = SampleEnvironment.attached(s, world=world, digest=run_id, endpoints={
            "opensubtitles": os_fx.api_url, "subdl": sd_fx.api_url, "subdl_download": sd_fx.download_url})
        stats = execute(stage, RunContext(settings=s, run_id=run_id, env=env, **ctx_options))
        return stats, os_fx.count("search") + sd_fx.count("search")


def _rows(home: Path, sql: str, *args) -> list[tuple]:
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        return con.execute(sql, list(args)).fetchall()


@pytest.fixture()
def acquired(world, surveyed, tmp_path):
    """A world copy (edited by some tests) and a home whose first acquire searched everything."""
    w = tmp_path / "world"
    shutil.copytree(world, w)
    home = tmp_path / "home"
    shutil.copytree(surveyed, home)
    stats, searches = _stage(w, home, AcquireStage(), "a1")
    assert searches > 0 and stats["searched"] > 0 and stats["search_cached"] == 0
    return w, home, stats


def test_a_fresh_search_is_not_repeated_and_the_candidates_stand(acquired):
    w, home, first = acquired
    before = _rows(home, CANDIDATES)
    keys = _rows(home, "SELECT count(*) FROM search_cache")[0][0]
    stats, searches = _stage(w, home, AcquireStage(), "a2")
    assert searches == 0 and stats["searched"] == 0
    assert stats["search_cached"] == keys == first["searched"] + first["search_failed"]
    assert _rows(home, CANDIDATES) == before
    # --refresh-search asks everything again and finds the same candidates, same ranks
    stats, searches = _stage(w, home, AcquireStage(), "a3", refresh_search=True)
    assert searches > 0 and stats["searched"] == keys and stats["search_cached"] == 0
    assert _rows(home, CANDIDATES) == before


def test_an_expired_search_is_repeated(acquired):
    w, home, _ = acquired
    before = _rows(home, CANDIDATES)
    film, n_keys = _rows(home, "SELECT imdb_id, count(*) FROM search_cache GROUP BY 1 ORDER BY 1 LIMIT 1")[0]
    with connect(home / "state.duckdb") as con:  # one film searched longer ago than the TTL (24 h)
        con.execute("UPDATE search_cache SET searched_at = searched_at - INTERVAL 25 HOUR WHERE imdb_id = ?", [film])
    stats, searches = _stage(w, home, AcquireStage(), "a2")
    assert stats["searched"] == n_keys and searches >= n_keys
    assert _rows(home, "SELECT DISTINCT imdb_id FROM search_cache WHERE run_id = 'a2'") == [(film,)]
    assert _rows(home, CANDIDATES) == before  # the world did not change: the same answer


def test_a_film_whose_provider_files_changed_or_that_was_never_searched_is_searched(acquired):
    w, home, _ = acquired
    films = [r[0] for r in _rows(home, "SELECT DISTINCT imdb_id FROM search_cache ORDER BY 1")]
    changed, new = films[0], films[1]
    srt = sorted((w / "subtitles" / changed).rglob("*.srt"))[0]
    srt.write_bytes(srt.read_bytes() + b"\n")  # one provider file of this film changed
    with connect(home / "state.duckdb") as con:  # as if this film had just joined the cohort
        con.execute("DELETE FROM search_cache WHERE imdb_id = ?", [new])
    stats, searches = _stage(w, home, AcquireStage(), "a2")
    redone = {r[0] for r in _rows(home, "SELECT DISTINCT imdb_id FROM search_cache WHERE run_id = 'a2'")}
    assert redone == {changed, new} and searches > 0
    assert stats["search_cached"] == _rows(home, "SELECT count(*) FROM search_cache WHERE run_id <> 'a2'")[0][0]


# --------------------------------------------------------------------------------------------
# the fast path
# --------------------------------------------------------------------------------------------
@pytest.fixture()
def recorded(world, tmp_path):
    """A home as a completed sample build leaves it — its world, state DB, raw store and a
    release whose manifest lists its files — and the build's record."""
    home = tmp_path / "home"
    target = home / "sample-world" / "seed7-n17"
    shutil.copytree(world, target)
    s = load_settings(home=home)
    blob = RawStore(home / "raw").put(b"raw bytes")[0]
    with connect(s.state_db) as con:  # the schema, every table empty but the one blob it names
        con.execute("INSERT INTO blobs VALUES ('opensubtitles', '1', ?, 9, NULL, 'en', 'tt1', 1, now())", [blob])
    rel = home / "releases" / "1.0.0"
    rel.mkdir(parents=True)
    files = {}
    for name, data in (("tracks.parquet", b"PAR1 tracks"), ("README.md", b"# card\n")):
        (rel / name).write_bytes(data)
        files[name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (rel / "manifest.json").write_text(json.dumps({"version": "1.0.0", "files": files}))
    env = SampleEnvironment(s, seed=7, n_films=17)
    summary = {"run_id": "r0", "home": str(home), "status": "completed",
               "release": {"version": "1.0.0", "path": str(rel), "new": True, "change": "initial"},
               "films": 3, "tracks": 5, "entries": 50, "flags_by_layer": {}, "flags_on_selected_tracks": {},
               "selection": {}, "funnel": [],
               "work": {"downloaded": 5, "reused_raw_bytes": 0, "tracks_processed": 5, "refused_at_search": 0,
                        "rounds": 1, "tracks_in_state": 5, "raw_files_in_store": 1, "reused_stages": [],
                        "sample_world_reused": False}}
    fast.record(s, env, summary)
    assert (home / fast.RECORD).is_file()
    return s, home, target, rel


def test_nothing_changed_reuses_the_last_build_and_records_the_run(recorded):
    s, home, _, _ = recorded
    out = fast.try_reuse(s, SampleEnvironment(s, seed=7, n_films=17), "r1")
    assert out is not None and out["reused_build"] == "r0" and out["run_id"] == "r1"
    assert out["release"]["version"] == "1.0.0" and out["release"]["new"] is False
    assert out["work"]["downloaded"] == 0 and out["work"]["tracks_processed"] == 0
    assert out["films"] == 3 and out["entries"] == 50
    assert _rows(home, "SELECT status FROM runs WHERE run_id = 'r1'") == [("reused",)]
    # a second fast path too (its own runs row changes nothing the fingerprint reads)
    assert fast.try_reuse(s, SampleEnvironment(s, seed=7, n_films=17), "r2") is not None
    # other seeds, other worlds: not this build
    assert fast.try_reuse(s, SampleEnvironment(s, seed=8, n_films=17), "r3") is None


def _changed_world_byte(s, home, target, rel) -> None:
    srt = sorted((target / "subtitles").rglob("*.srt"))[0]
    data = bytearray(srt.read_bytes())
    data[-2] ^= 1
    srt.write_bytes(bytes(data))


def _tampered_release(s, home, target, rel) -> None:
    (rel / "tracks.parquet").write_bytes(b"PAR1 trackz")


def _review_decision(s, home, target, rel) -> None:
    with connect(s.state_db) as con:  # `cinesub review` wrote a decision: the next build must honour it
        con.execute("INSERT INTO decisions VALUES ('d1', 't1', 'tt1', 'en', 'exclude', 'test', 'curator', now())")


def _expired_search(s, home, target, rel) -> None:
    with connect(s.state_db) as con:
        con.execute("INSERT INTO search_cache VALUES ('tt1', 'en', 'opensubtitles', NULL, "
                    "now() - INTERVAL 30 HOUR, 'r0', 0, 0)")


def _named_blob_gone(s, home, target, rel) -> None:
    for p in (home / "raw").rglob("*"):
        if p.is_file():
            p.chmod(0o644)
            p.unlink()


def _mirror_changed(s, home, target, rel) -> None:
    (home / "sources" / "sample-mirror").mkdir(parents=True)
    (home / "sources" / "sample-mirror" / "page.html").write_text("<html/>")


@pytest.mark.parametrize("change", [_changed_world_byte, _tampered_release, _review_decision, _expired_search,
                                    _named_blob_gone, _mirror_changed])
def test_any_difference_takes_the_normal_build(recorded, change):
    s, home, target, rel = recorded
    change(s, home, target, rel)
    assert fast.try_reuse(s, SampleEnvironment(s, seed=7, n_films=17), "r1") is None
    assert _rows(home, "SELECT count(*) FROM runs")[0][0] == 0


def test_blobs_the_state_does_not_name_change_nothing(recorded):
    """The Hollywood flow shares the raw store: its page images and texts are not the subtitle
    build's inputs (a `make build` builds both; the next subtitle build still takes the fast path)."""
    s, home, _, _ = recorded
    RawStore(home / "raw").put(b"a Variety page image")
    assert fast.try_reuse(s, SampleEnvironment(s, seed=7, n_films=17), "r1") is not None


def test_fault_modes_and_a_failed_build_leave_no_record(recorded):
    s, home, _, _ = recorded
    fast.record(s, SampleEnvironment(s, seed=7, n_films=17, faults="rate_429"), {"status": "completed"})
    assert not (home / fast.RECORD).exists()
    assert fast.try_reuse(s, SampleEnvironment(s, seed=7, n_films=17), "r1") is None


def test_the_cli_fast_path_imports_neither_prefect_nor_polars(recorded):
    s, home, _, _ = recorded
    code = ("import sys, json; from typer.testing import CliRunner; from cinesub.cli import app; "
            f"r = CliRunner().invoke(app, ['build', '--sample', '--films', '17', '--home', {str(home)!r}]); "
            "print(json.dumps([r.exit_code, r.output, 'prefect' in sys.modules, 'polars' in sys.modules]))")
    for _ in range(3):  # the code is part of the fingerprint: another edit of the tree meanwhile → record again
        code_before = fast.code_digest()
        fast.record(s, SampleEnvironment(s, seed=7, n_films=17), json.loads(
            (home / fast.RECORD).read_text())["summary"])
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                              env={"PATH": "/usr/bin:/bin", "CINESUB_HOME": str(home), "HOME": str(home)})
        if fast.code_digest() == code_before:
            break
    assert proc.returncode == 0, proc.stderr[-3000:]
    exit_code, output, prefect, polars = json.loads(proc.stdout.strip().splitlines()[-1])
    assert exit_code == 0, output
    assert "nothing changed since build r0" in output and "release 1.0.0" in output
    assert not prefect and not polars
    assert [r[0] for r in _rows(home, "SELECT status FROM runs")] == ["reused"]
