"""Issue 18 point 4: the cohort stage measures only the tracks whose released entries changed
(flows/stages/subtitles/cohort.py ``_audit_measures``, docs/rebuilds.md "What the cohort and
survey stages redo"), and the survey asks only the films whose provider files changed
(tests/test_survey_incremental.py has the survey's own cases).

The end-to-end case: the 20-film sample build, two tracks re-uploaded as bench_rebuild does, then
the rebuild twice from that same state — once with the caches the first build left (the
incremental path) and once with the cohort and survey caches removed (a from-scratch
computation of the same inputs): the stages' state tables and every file of the new release are
the same, and only the changed tracks and films were computed again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from cinesub.settings import load_settings
from cinesub.state import connect
from flows.kernel_context import RunContext
from flows.stages.subtitles.cohort import CohortStage, audit_cache

#: the state tables each stage writes (compared row for row)
OUTPUTS = {"cohort": CohortStage.writes, "survey": ("availability", "selected_attributes", "selection_per_k")}
CACHES = ("cohort-audit", "survey")


def _tables(home: Path, tables) -> dict[str, list[tuple]]:
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        return {t: sorted(con.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


def _last_stats(home: Path, stage: str) -> dict:
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        row = con.execute("""SELECT s.stats FROM stage_runs s JOIN runs r USING (run_id)
                             WHERE s.stage = ? ORDER BY r.started_at DESC LIMIT 1""", [stage]).fetchone()
    return json.loads(row[0])


def _release_files(path: Path) -> dict:
    """sha256 of every file the manifest lists; the database by its rows (DuckDB's file is not
    byte-reproducible, tests/test_release_cache.py); the per-stage statistics without their
    seconds (two builds never take the same time), and croissant.json with that file's sha256
    left out (it lists the sha256 of every file)."""
    import pyarrow.parquet as pq

    from _release_files import release_files

    files = json.loads((path / "manifest.json").read_text())["files"]
    timed = "stats/stages.parquet"
    out = release_files(path, skip=(timed, "croissant.json"))
    out[timed] = pq.read_table(path / timed).drop_columns(["seconds"]).to_pylist()
    out["croissant.json"] = (path / "croissant.json").read_text().replace(files[timed]["sha256"], "?")
    return out


@pytest.mark.slow
def test_an_incremental_rebuild_equals_the_one_computed_from_scratch(tmp_path):
    from _cli_runner import copy_home, run_build, sample20_build

    from benchmarks.bench_rebuild import reupload

    base, _ = sample20_build()
    inc = copy_home(base, tmp_path / "incremental")
    assert all((inc / "cache" / c).is_dir() for c in CACHES)  # the first build left them
    with duckdb.connect(str(inc / "state.duckdb"), read_only=True) as con:
        n_tracks = con.execute("SELECT count(*) FROM tracks").fetchone()[0]
    changed = reupload(inc, inc / "sample-world" / "seed7-n20", 2 / n_tracks)
    assert len(changed) == 2
    scratch = copy_home(inc, tmp_path / "scratch")
    for c in CACHES:
        shutil.rmtree(scratch / "cache" / c)

    releases = {}
    for home in (inc, scratch):
        proc = run_build(home, films=20)
        assert proc.returncode == 0, proc.stderr[-3000:]
        summary = json.loads(proc.stdout[proc.stdout.index("{"):])
        assert summary["release"]["new"] and summary["work"]["tracks_processed"] == 2
        releases[home] = Path(summary["release"]["path"])

    # the incremental path was taken: only the changed tracks measured, the changed films asked
    audited, fresh = _last_stats(inc, "cohort")["audit_cache"], _last_stats(scratch, "cohort")["audit_cache"]
    assert fresh["hits"] == 0 and fresh["misses"] > 2
    with duckdb.connect(str(inc / "state.duckdb"), read_only=True) as con:
        new_audited = con.execute(
            """SELECT count(*) FROM selections s JOIN film_gates g ON g.imdb_id = s.imdb_id AND g.dropped_at IS NULL
               WHERE s.file_id IN (SELECT unnest(?::VARCHAR[]))""", [[c["new_file_id"] for c in changed]]).fetchone()[0]
    assert audited == {"hits": fresh["misses"] - new_audited, "misses": new_audited}
    inc_survey, scratch_survey = _last_stats(inc, "survey"), _last_stats(scratch, "survey")
    assert scratch_survey["survey_cached"] == 0
    assert inc_survey["survey_cached"] == inc_survey["surveyed"] - len({c["imdb_id"] for c in changed}) > 0

    # ... and its outputs are those of the computation from scratch
    for stage, tables in OUTPUTS.items():
        assert _tables(inc, tables) == _tables(scratch, tables), stage
    assert _release_files(releases[inc]) == _release_files(releases[scratch])


# -- the stage on its own: a changed entry, other code, an unreadable entry ----------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from _cli_runner import copy_home, sample20_build

    base, _ = sample20_build()
    return copy_home(base, tmp_path_factory.mktemp("cohort") / "home")


def _cohort(home: Path) -> dict:
    """The cohort stage run directly (no kernel, no Prefect) on ``home``'s state."""
    s = load_settings(home=home)
    stage = CohortStage()
    ctx = RunContext(settings=s, run_id="t")
    with connect(s.state_db) as con:
        return stage.run(ctx, con)


#: the tracks the stage audits: the selected tracks of cohort films
AUDITED = """SELECT DISTINCT s.track_id FROM selections s JOIN film_gates g ON g.imdb_id = s.imdb_id
             AND g.dropped_at IS NULL WHERE s.track_id IS NOT NULL ORDER BY 1"""


def _measures(home: Path, cache_root: Path | None) -> dict:
    """The audited tracks' measures, through a cache under ``cache_root`` (None: computed)."""
    with connect(home / "state.duckdb") as con:
        ids = [r[0] for r in con.execute(AUDITED).fetchall()]
        return CohortStage._audit_measures(con, ids, audit_cache(cache_root))


def test_a_changed_entry_is_measured_again_and_the_rest_is_read_back(built, tmp_path):
    from _cli_runner import copy_home

    home = copy_home(built, tmp_path / "home")
    before = _tables(home, OUTPUTS["cohort"])
    warm = _cohort(home)["audit_cache"]  # (misses only where code changed since the build)
    first = _cohort(home)
    audited = warm["hits"] + warm["misses"]
    assert first["audit_cache"] == {"hits": audited, "misses": 0} and audited > 1
    assert _tables(home, OUTPUTS["cohort"]) == before
    assert _measures(home, None) == _measures(home, home / "cache" / "cohort-audit")
    with duckdb.connect(str(home / "state.duckdb")) as con:
        track = con.execute("""SELECT s.track_id FROM selections s JOIN film_gates g USING (imdb_id)
                               WHERE g.dropped_at IS NULL AND s.language = 'en' ORDER BY 1 LIMIT 1""").fetchone()[0]
        # a sanitization decision changed: one entry's text (the track id stays)
        con.execute("""UPDATE entries SET clean_content = NULL WHERE track_id = ? AND position =
                       (SELECT min(position) FROM entries WHERE track_id = ? AND clean_content IS NOT NULL)""",
                    [track, track])
    again = _cohort(home)
    assert again["audit_cache"] == {"hits": first["audit_cache"]["hits"] - 1, "misses": 1}
    assert _measures(home, home / "cache" / "cohort-audit") == _measures(home, None)
    after = _tables(home, OUTPUTS["cohort"])
    assert len(after["token_counts"]) == len(before["token_counts"]) + 1  # the new text was counted


def test_measures_of_other_code_are_never_read_back(built, tmp_path, monkeypatch):
    from _cli_runner import copy_home

    home = copy_home(built, tmp_path / "home")
    root = home / "cache" / "cohort-audit"
    prefix = audit_cache(root).prefix
    assert prefix == audit_cache(root).prefix != ""
    _cohort(home)  # the cache holds every audited track for this code
    from validators import duration_audit

    edited = tmp_path / "duration_audit.py"  # validators/duration_audit.py with one more byte
    edited.write_bytes(Path(duration_audit.__file__).read_bytes() + b"\n")
    monkeypatch.setattr(duration_audit, "__file__", str(edited))
    assert audit_cache(root).prefix != prefix
    before = _tables(home, OUTPUTS["cohort"])
    stats = _cohort(home)
    assert stats["audit_cache"]["hits"] == 0 and stats["audit_cache"]["misses"] > 1
    assert _tables(home, OUTPUTS["cohort"]) == before  # recomputed: the same rows


def test_an_unreadable_or_wrong_entry_is_a_miss_and_is_rewritten(built, tmp_path):
    from _cli_runner import copy_home

    home = copy_home(built, tmp_path / "home")
    shutil.rmtree(home / "cache" / "cohort-audit")
    assert _cohort(home)["audit_cache"]["hits"] == 0
    files = sorted((home / "cache" / "cohort-audit").rglob("*.json"))
    assert len(files) > 2
    files[0].write_text("{")
    files[1].write_text(json.dumps({"n_entries": "3", "covered_ms": 1, "text_sha256": "x"}))
    before = _tables(home, OUTPUTS["cohort"])
    stats = _cohort(home)
    assert stats["audit_cache"]["misses"] == 2
    assert _tables(home, OUTPUTS["cohort"]) == before
    assert _cohort(home)["audit_cache"]["misses"] == 0  # written again
