"""Issue 18 point 4: the survey stage asks the provider only for films whose answer may have
changed (flows/stages/subtitles/survey.py ``survey_cache``, docs/rebuilds.md "What the cohort
and survey stages redo"): an unchanged film's answer is read back, a film whose provider files
changed is asked again, and the rows are those of a survey from scratch; ``--refresh-search``,
``--force``, a TTL of 0, an expired answer, other settings, other code and fault modes ask every
film; a failed search keeps no answer. The end-to-end rebuild is in tests/test_cohort_incremental.py."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import duckdb
import pytest

from test_cohort_incremental import _tables
from test_rebuild_fast import _stage
from test_survey import inventoried  # noqa: F401  (module fixture: a home with the small world's inventory)

from cinesub.state import sql_text
from flows.env.sample import SampleEnvironment
from flows.stages.subtitles.survey import SurveyStage

TABLES = SurveyStage.writes


@pytest.fixture()
def setup(world, inventoried, tmp_path):
    """(a world copy the test may edit, a home with the inventory)."""
    w, home = tmp_path / "world", tmp_path / "home"
    shutil.copytree(world, w)
    shutil.copytree(inventoried, home)
    return w, home


def _run(world: Path, home: Path, run_id: str, **options):
    """The survey stage against fresh fixture servers (tests/test_rebuild_fast.py ``_stage``: the
    kernel never reuses the stage itself): (stats, availability queries answered)."""
    return _stage(world, home, SurveyStage(), run_id, **options)


def _drop_one_item(world: Path) -> str:
    """Remove one listed subtitle item (its file and sidecar) of the first film that has two in
    one language: that film's provider answer changes. Returns the film."""
    for lang_dir in sorted((world / "subtitles").glob("*/*")):
        srts = sorted(lang_dir.glob("*.srt"))
        if len(srts) >= 2:
            srts[-1].unlink()
            srts[-1].with_suffix(".json").unlink(missing_ok=True)
            return lang_dir.parent.name
    raise AssertionError("no film with two items in one language")


def test_only_a_changed_film_is_asked_again_and_the_rows_are_a_fresh_surveys(setup, tmp_path):
    world, home = setup
    first, asked = _run(world, home, "r1")
    films = first["surveyed"]
    assert films > 2 and asked == films and first["survey_cached"] == 0
    rows = _tables(home, TABLES)
    again, asked = _run(world, home, "r2")
    assert not again["reused"] and asked == 0 and again["survey_cached"] == films
    assert _tables(home, TABLES) == rows

    film = _drop_one_item(world)
    scratch = tmp_path / "scratch"
    shutil.copytree(home, scratch)
    shutil.rmtree(scratch / "cache" / "survey")
    third, asked = _run(world, home, "r3")
    assert asked == 1 and third["survey_cached"] == films - 1
    fresh, asked = _run(world, scratch, "r3")
    assert asked == films and fresh["survey_cached"] == 0
    assert _tables(home, TABLES) == _tables(scratch, TABLES)
    before = {r for r in rows["availability"] if r[0] == film}
    assert {r for r in _tables(home, TABLES)["availability"] if r[0] == film} != before  # the change is seen


@pytest.mark.parametrize("how", ["refresh_search", "force", "ttl_0", "expired", "other_settings", "other_code",
                                 "fault_modes"])
def test_every_film_is_asked_when_a_kept_answer_may_not_stand(how, setup, monkeypatch):
    world, home = setup
    first, asked = _run(world, home, "r1")
    films = first["surveyed"]
    rows = _tables(home, TABLES)
    options: dict = {}
    if how in ("refresh_search", "force"):
        options[how] = True
    elif how == "ttl_0":
        monkeypatch.setenv("CINESUB_PROVIDERS__SEARCH_TTL_HOURS", "0")
    elif how == "expired":
        for path in (home / "cache" / "survey").rglob("*.json"):
            value = json.loads(path.read_text())
            path.write_text(json.dumps({**value, "at": time.time() - 25 * 3600}))
    elif how == "other_settings":  # another config hash
        monkeypatch.setenv("CINESUB_SELECTION__SURVEY_MAX_PAGES", "7")
    elif how == "other_code":  # extractors/http_client.py with one more byte
        import extractors.http_client as http_client

        edited = home.parent / "http_client.py"
        edited.write_bytes(Path(http_client.__file__).read_bytes() + b"\n")
        monkeypatch.setattr(http_client, "__file__", str(edited))
    else:  # a fault build's answers are never kept nor reused
        monkeypatch.setattr(SampleEnvironment, "search_cacheable", property(lambda self: False))
        shutil.rmtree(home / "cache" / "survey")
    again, asked = _run(world, home, "r2", **options)
    assert asked == films and again["survey_cached"] == 0
    assert _tables(home, TABLES) == rows
    if how == "fault_modes":
        assert not (home / "cache" / "survey").exists()


def test_a_failed_search_keeps_no_answer(setup, monkeypatch):
    from extractors.providers.errors import ProviderError
    from extractors.providers.opensubtitles import OpenSubtitlesProvider

    world, home = setup
    with duckdb.connect(str(home / "state.duckdb")) as con:
        con.execute(sql_text("eligible_films.sql"))
        victim = con.execute("SELECT min(imdb_id) FROM eligible_films").fetchone()[0]
    real = OpenSubtitlesProvider.availability

    def flaky(self, imdb_id, *a, **kw):
        if imdb_id == victim:
            raise ProviderError("bad_response", "GET /subtitles: HTTP 502 (planted)")
        return real(self, imdb_id, *a, **kw)

    with monkeypatch.context() as mp:
        mp.setattr(OpenSubtitlesProvider, "availability", flaky)
        first, _ = _run(world, home, "r1")
    assert first["search_failed"] == 1
    again, asked = _run(world, home, "r2")
    assert asked == 1 and again["search_failed"] == 0 and again["survey_cached"] == again["surveyed"] - 1
