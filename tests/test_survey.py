"""Issue 16 point 5: the paper's selection run by the build (stage ``survey``, docs/coverage.md
"Selection run by the build"). The stage runs on the small sample world against the real
OpenSubtitles client and the loopback emulation: the availability survey lists the planted
search-only languages, the exact search keeps the six languages (the frequency prefix for K=6
does not) and the ten countries; fixed mode, a failed search and the reuse of an unchanged
survey; the acquire stage then searches the chosen languages."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from cinesub.settings import COUNTRIES, LANGUAGES, load_settings
from fixtures.opensubtitles_server import OpenSubtitlesFixture
from fixtures.subdl_server import SubDLFixture
from flows.env.sample import SampleEnvironment, sample_credentials
from flows.kernel_context import RunContext
from flows.kernel_exec import execute
from flows.stages.subtitles.inventory import InventoryStage
from flows.stages.subtitles.survey import SurveyStage, choose, country_of, release_order


@pytest.fixture(scope="module")
def inventoried(world, tmp_path_factory) -> Path:
    """A home whose state DB holds the inventory of the small world (reused by each test's copy)."""
    home = tmp_path_factory.mktemp("inv")
    s = load_settings(home=home)
    execute(InventoryStage(), RunContext(settings=s, run_id="inv", env=SampleEnvironment.attached(s, world=world)))
    return home


def _home(inventoried: Path, tmp_path: Path) -> Path:
    import shutil

    home = tmp_path / "home"
    shutil.copytree(inventoried, home)
    return home


def _run(world, home, run_id="r1", os_faults=None, stage=None, **overrides):
    s = load_settings(home=home, **overrides)
    creds = sample_credentials(s)
    with OpenSubtitlesFixture(world, os_faults, api_key=creds["api_key"], username=creds["username"],
                              password=creds["password"]) as os_fx, \
            SubDLFixture(world, api_key=creds["subdl_api_key"]) as sd_fx:
        env = SampleEnvironment.attached(s, world=world, digest="test-world", endpoints={
            "opensubtitles": os_fx.api_url, "subdl": sd_fx.api_url, "subdl_download": sd_fx.download_url})
        ctx = RunContext(settings=s, run_id=run_id, env=env)
        stats = execute(stage or SurveyStage(), ctx)
        downloads = sum(os_fx.downloads_granted.values())
    return stats, s, downloads


def _q(settings, sql, *args):
    with duckdb.connect(str(settings.state_db), read_only=True) as con:
        return con.execute(sql, list(args)).fetchall()


def test_survey_chooses_the_six_languages_and_ten_countries_where_the_prefix_differs(world, manifest, inventoried,
                                                                                      tmp_path):
    stats, s, downloads = _run(world, _home(inventoried, tmp_path))
    assert downloads == 0  # search-only: no quota spent
    assert stats["search_failed"] == 0 and stats["surveyed"] == stats["films"] > 0
    listed = {r[0] for r in _q(s, "SELECT DISTINCT language FROM availability WHERE items > 0")}
    assert listed == set(LANGUAGES) | {manifest["survey"]["rival"], *manifest["survey"]["extra"]}
    chosen = _q(s, "SELECT dimension, attribute, position, mode FROM selected_attributes ORDER BY 1, 3")
    assert [r[1] for r in chosen if r[0] == "languages"] == list(LANGUAGES)  # release order
    assert [r[1] for r in chosen if r[0] == "countries"] == list(COUNTRIES)
    assert {r[3] for r in chosen} == {"survey"}
    per_k = {(d, k, m): (a, f, sc) for d, k, m, a, f, sc in _q(s, "SELECT * FROM selection_per_k")}
    search, prefix = per_k[("languages", 6, "search")], per_k[("languages", 6, "prefix")]
    assert search[0] == ",".join(sorted(LANGUAGES))
    # the planted frequent rival is in the frequency prefix, which keeps fewer films
    assert manifest["survey"]["rival"] in prefix[0].split(",") and prefix[2] < search[2]
    assert per_k[("countries", 10, "search")][0] == ",".join(sorted(COUNTRIES))
    assert all(per_k[(d, k, "search")][2] >= (per_k[(d, k, "prefix")][2] or 0)
               for d, k, m in per_k if m == "search" and per_k[(d, k, m)][2] is not None)
    # the stats say the same
    assert stats["languages"]["chosen"] == list(LANGUAGES) and stats["languages"]["prefix"]["attributes"] != sorted(LANGUAGES)
    assert stats["countries"]["films"] == search[1]


def test_unchanged_survey_is_reused_and_fixed_mode_records_the_tables(world, inventoried, tmp_path):
    home = _home(inventoried, tmp_path)
    first, s, _ = _run(world, home, "r1")
    again, _, _ = _run(world, home, "r2")
    assert not first["reused"] and again["reused"]
    fixed, s2, _ = _run(world, home, "r3", selection={"languages_mode": "fixed", "countries_mode": "fixed"},
                           languages=("en", "ar"), countries=("Germany", "France"))
    assert not fixed["reused"]  # other settings: another fingerprint
    chosen = _q(s2, "SELECT dimension, attribute, mode FROM selected_attributes ORDER BY dimension, position")
    assert chosen == [("countries", "Germany", "fixed"), ("countries", "France", "fixed"),
                      ("languages", "en", "fixed"), ("languages", "ar", "fixed")]
    assert _q(s2, "SELECT count(*) FROM availability WHERE items > 0")[0][0] > 0  # the survey still ran
    assert _q(s2, "SELECT count(*) FROM selection_per_k WHERE dimension = 'languages'")[0][0] > 0


def test_a_failed_search_is_a_recorded_row_and_the_stage_goes_on(world, inventoried, tmp_path, monkeypatch):
    from extractors.providers.errors import ProviderError
    from extractors.providers.opensubtitles import OpenSubtitlesProvider

    home = _home(inventoried, tmp_path)
    real = OpenSubtitlesProvider.availability
    victims: list[str] = []

    def flaky(self, imdb_id, *a, **kw):
        if not victims:
            victims.append(imdb_id)
        if imdb_id == victims[0]:
            raise ProviderError("bad_response", "GET /subtitles: HTTP 502 (planted)")
        return real(self, imdb_id, *a, **kw)

    monkeypatch.setattr(OpenSubtitlesProvider, "availability", flaky)
    stats, s, _ = _run(world, home)
    assert stats["search_failed"] == 1 and stats["incomplete"] and stats["dropped"] == {"search_failed": 1}
    rows = _q(s, "SELECT language, items, status, reason FROM availability WHERE imdb_id = ?", victims[0])
    assert rows == [("*", None, "search_failed", "bad_response: GET /subtitles: HTTP 502 (planted)")]
    assert [r[0] for r in _q(s, "SELECT attribute FROM selected_attributes WHERE dimension = 'languages' "
                                 "ORDER BY position")] == list(LANGUAGES)


def test_acquire_searches_the_languages_the_survey_chose(world, inventoried, tmp_path):
    from flows.stages.subtitles.acquire import AcquireStage

    home = _home(inventoried, tmp_path)
    # K=5 with English required: the optimum over this world's survey (not one of the fixed six alone)
    stats, s, _ = _run(world, home, selection={"languages_k": 5})
    chosen = [r[0] for r in _q(s, "SELECT attribute FROM selected_attributes WHERE dimension = 'languages' "
                                  "ORDER BY position")]
    # at K=5 the planted rival ties fa and vi at one film less than all, and wins on the name
    assert chosen == ["en", "ar", "id", "ro", "es"]
    acq, _, _ = _run(world, home, "r2", stage=AcquireStage(), selection={"languages_k": 5})
    searched = {r[0] for r in _q(s, "SELECT DISTINCT language FROM candidates")}
    assert searched == set(chosen)  # fa and vi are not acquired; the chosen es is
    # the survey's es items are listings without bytes: each download refused is a recorded attempt
    outcomes = _q(s, "SELECT DISTINCT outcome FROM attempts WHERE language = 'es'")
    assert outcomes and all(o[0] in ("download_rejected", "download_failed") for o in outcomes)


def test_choose_and_orders():
    pairs = [("a", "en"), ("a", "x"), ("b", "en"), ("b", "x"), ("c", "en"), ("c", "y")]
    result, entry, why = choose(pairs, pool=None, k=2, require=("en",), min_films=1)
    assert entry["attributes"] == ["en", "x"] and why is None
    assert choose(pairs, pool=None, k=2, require=("zz",), min_films=1)[1:] == (None, "required_unavailable: zz")
    assert choose([], pool=None, k=2, require=(), min_films=1)[1:] == (None, "no_availability")
    assert choose(pairs, pool=None, k=9, require=(), min_films=1)[1] is None
    assert choose(pairs, pool=None, k="optimum", require=("en",), min_films=1)[1]["score"] == 4
    assert release_order(["vi", "en", "zz", "ar"], LANGUAGES, ("en",)) == ["en", "ar", "vi", "zz"]
    assert country_of("UK:12A::(Blu-ray rating)") == "United Kingdom"
    assert country_of("Canada:14A::(Alberta)") == "Canada"
    assert country_of("Spain:Not Rated") is None and country_of("garbage") is None
    assert country_of("Malaysia:(Banned)") is None and country_of("USA:Unrated::(unrated version)") is None


def test_the_sample_build_acquires_what_the_survey_chose_and_releases_the_tables():
    import polars as pl
    from _cli_runner import sample20_build

    home, summary = sample20_build()
    assert summary["selection"]["languages"] == {"mode": "survey", "chosen": list(LANGUAGES)}
    assert summary["selection"]["countries"] == {"mode": "survey", "chosen": list(COUNTRIES)}
    rel = Path(summary["release"]["path"])
    sel = pl.read_parquet(rel / "selection.parquet")
    assert sel.filter(pl.col("dimension") == "languages").sort("position")["attribute"].to_list() == list(LANGUAGES)
    per_k = pl.read_parquet(rel / "selection_per_k.parquet")
    six = {m: per_k.filter((pl.col("dimension") == "languages") & (pl.col("k") == 6) & (pl.col("method") == m))
           for m in ("search", "prefix")}
    assert six["search"]["attributes"][0] == ",".join(sorted(LANGUAGES))
    assert six["prefix"]["attributes"][0] != six["search"]["attributes"][0]
    assert six["prefix"]["score"][0] < six["search"]["score"][0]
    assert set(per_k["dimension"]) == {"languages", "countries"}
    man = json.loads((rel / "manifest.json").read_text())
    assert {"selection.parquet", "selection_per_k.parquet"} <= set(man["files"])
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        acquired = {r[0] for r in con.execute("SELECT DISTINCT language FROM candidates").fetchall()}
    assert acquired == set(LANGUAGES)  # the surveyed extra languages are never acquired
