"""The CCE stages of `build-hollywood` with the Gemini page extractor (flows/stages/hollywood/cce.py,
issue 10), run in-process against the loopback fixtures (fixtures/ia_server.py and
fixtures/gemini_pages_server.py serving the CCE sample world): every CCE page image stored at
discovery; on the image-only volume Gemini's records are the extraction (``extractor='gemini'``);
on text pages the OCR parser stays the source of record and ``pd_cce_crosscheck`` holds the
agreement per page (the two planted Gemini errors disagree, every other page agrees); a second
run sends no Gemini request (answers cached per image); pages Gemini could not read become
``gemini:<reason>`` rows and leave the stage to be run again; the Batch API mode against the
fixture gives the same tables; Gemini unavailable leaves the image-only pages unread, with their
reason. (The end-to-end build is checked in tests/test_hollywood_flow.py.)"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from cinesub.rawstore import RawStore
from cinesub.sample.cce import IMAGE_ONLY_VOLUME
from cinesub.settings import load_settings
from flows.env.sample import SampleEnvironment
from flows.kernel_context import GeminiPlan, RunContext
from flows.kernel_exec import execute
from flows.stages.hollywood.cce import CCEDiscoverStage, CCEParseStage
from flows.stages.hollywood.common import pd_connect, pd_state_db
from fixtures.gemini_pages_server import GeminiPagesFixture
from tests._cce_world import ia, world  # noqa: F401  (module fixtures)

MIDNIGHT = ("catalogofcopyri1961motsynth", 1)  # the fixture misreads R285114 as R285144
PATROL = ("motionpict19121939synth", 1)  # the fixture drops NIGHT PATROL (LP4580, 2Feb34)
N_PAGES = 16  # 8 volumes of a title page and one entry page
TABLES = ("pd_registrations", "pd_renewals", "pd_unparsed", "pd_cce_crosscheck")




@pytest.fixture(scope="module")
def gem(world):
    """One Gemini fixture for the module (tests count its requests by difference)."""
    with GeminiPagesFixture(world) as srv:
        yield srv


@pytest.fixture(scope="module")
def built(world, ia, gem, tmp_path_factory):
    """cce-discover and cce-parse with Gemini (sequential calls) into a fresh home."""
    home = tmp_path_factory.mktemp("cce-home")
    ctx = _ctx(home, world, ia.host, gem.base_url)
    n0 = gem.count("generate")
    disc = execute(CCEDiscoverStage(), ctx)
    parse = execute(CCEParseStage(), ctx)
    return {"home": home, "ctx": ctx, "discover": disc, "parse": parse, "requests": gem.count("generate") - n0}


def _ctx(home: Path, world: Path, ia_host: str, gemini_url: str | None, *, batch: bool = False) -> RunContext:
    settings = load_settings(None, home)
    settings.hollywood.gemini_batch = batch
    available = gemini_url is not None
    env = SampleEnvironment.attached(settings, worlds={"cce": world}, digest="test-world",
                                     endpoints={"ia_host": ia_host, "gemini_url": gemini_url})
    plan = GeminiPlan(available=available, model=settings.hollywood.gemini_model if available else None,
                      primary_extractor="gemini" if available else "ocr-rules")
    return RunContext(settings=settings, run_id="r1", flow="build-hollywood", env=env, gemini=plan)


def _query(home: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(pd_state_db(load_settings(None, home))), read_only=True) as con:
        return con.execute(sql).fetchall()


def _manifest(world: Path) -> dict:
    return json.loads((world / "manifest.json").read_text(encoding="utf-8"))


def test_image_only_pages_are_read_by_gemini_and_text_pages_cross_checked(world, built):
    home, ctx, disc, parse = built["home"], built["ctx"], built["discover"], built["parse"]
    # every page, text layer or not, has its image in the raw store
    assert disc["kinds"] == {"registrations": 11, "renewals": 3, "image_only": 2} and disc["page_images"] == N_PAGES
    store = RawStore(ctx.settings.raw_dir)
    for (sha,) in _query(home, "SELECT image_sha256 FROM pd_cce_pages"):
        assert store.get(sha).startswith(b"\x89PNG")
    assert parse["gemini_calls"] == built["requests"] == N_PAGES and parse["gemini_errors"] == {}
    # the image-only volume: Gemini's records are the extraction
    regs = _query(home, f"""SELECT reg_id, reg_date::VARCHAR, extractor, confident FROM pd_registrations
                            WHERE item_id = '{IMAGE_ONLY_VOLUME}' ORDER BY 1""")
    assert regs == [("LP26990", "1963-12-12", "gemini", True), ("LP28001", "1964-01-06", "gemini", True)]
    assert dict(_query(home, "SELECT extractor, count(*) FROM pd_registrations WHERE item_id <> "
                             f"'{IMAGE_ONLY_VOLUME}' GROUP BY 1")) == {"ocr-rules": 22}
    assert dict(_query(home, "SELECT extractor, count(*) FROM pd_renewals GROUP BY 1")) == {"ocr-rules": 11, "export": 1}
    assert _query(home, "SELECT count(*) FROM pd_unparsed WHERE reason = 'image_only_page' "
                        "OR reason LIKE 'gemini:%'") == [(0,)]
    # text pages: the OCR parser against Gemini, page by page
    cross = {(r[0], r[1]): r for r in _query(
        home, "SELECT item_id, page, agree, ocr_only, gemini_only, renewal_differs, matched FROM pd_cce_crosscheck")}
    text_pages = {(v["identifier"], p["page"]) for v in _manifest(world)["volumes"] if v["text_layer"]
                  for p in v["pages"]}
    assert set(cross) == text_pages and len(text_pages) == N_PAGES - 2
    assert {k for k, r in cross.items() if not r[2]} == {MIDNIGHT, PATROL}
    assert cross[MIDNIGHT][3:6] == ([], [], ["renewal|LP4388|1934-01-05: R285114 != R285144"])
    assert cross[PATROL][3:6] == (["registration|LP4580|1934-02-02"], [], [])
    assert parse["crosscheck"] == {"pages": 14, "agree": 12, "disagree": 2}


def test_unread_pages_get_gemini_reasons_and_the_next_build_asks_again(world, ia, gem, tmp_path):
    home = tmp_path / "home"
    # every request answered with a truncated JSON list: the 8 entry pages fail (malformed_json); the
    # title pages' empty answer "[]" survives the truncation
    gem.queue(*["malformed"] * N_PAGES)
    ctx = _ctx(home, world, ia.host, gem.base_url)
    execute(CCEDiscoverStage(), ctx)
    first = execute(CCEParseStage(), ctx)
    assert first["incomplete"] is True and first["gemini_errors"] == {"malformed_json": N_PAGES // 2}
    lost = _query(home, "SELECT item_id, page, kind, reason, extractor FROM pd_unparsed "
                        "WHERE reason LIKE 'gemini:%' ORDER BY 1, 2")
    volumes = sorted(v["identifier"] for v in _manifest(world)["volumes"])
    assert [r[:2] for r in lost] == [(v, 1) for v in volumes]
    assert {r[2:] for r in lost} == {("page", "gemini:malformed_json", "gemini")}
    # nothing read from the image-only volume, no entry page cross-checked; the OCR parser's records stand
    assert _query(home, f"SELECT count(*) FROM pd_registrations WHERE item_id = '{IMAGE_ONLY_VOLUME}'") == [(0,)]
    assert _query(home, "SELECT DISTINCT page FROM pd_cce_crosscheck") == [(0,)]
    assert _query(home, "SELECT count(*) FROM pd_registrations WHERE extractor = 'ocr-rules'") == [(22,)]
    second = execute(CCEParseStage(), ctx)  # not reused: the last run was incomplete
    # only the failed pages are asked again (the title pages' answers are cached)
    assert second["reused"] is False and "incomplete" not in second
    assert (second["gemini_calls"], second["gemini_cache_hits"]) == (N_PAGES // 2, N_PAGES // 2)
    assert gem.pending_faults == []
    assert _query(home, "SELECT count(*) FROM pd_unparsed WHERE reason LIKE 'gemini:%'") == [(0,)]
    assert _query(home, f"SELECT count(*) FROM pd_registrations WHERE item_id = '{IMAGE_ONLY_VOLUME}'") == [(2,)]
    assert second["crosscheck"] == {"pages": 14, "agree": 12, "disagree": 2}
    third = execute(CCEParseStage(), ctx)
    assert third["reused"] is True  # complete now: reused, no fixture needed


def test_a_second_run_sends_no_gemini_request(built, gem):
    """The answers are cached per page image: the stage run again (forced, as a rebuild with other
    settings would) reads every page from the cache and writes the same tables."""
    home, ctx = built["home"], built["ctx"]
    before = [_query(home, f"SELECT * FROM {t} ORDER BY ALL") for t in TABLES]
    n0 = len(gem.requests)
    again = execute(CCEParseStage(), ctx, force=True)
    assert len(gem.requests) == n0 and (again["gemini_calls"], again["gemini_cache_hits"]) == (0, N_PAGES)
    assert [_query(home, f"SELECT * FROM {t} ORDER BY ALL") for t in TABLES] == before


def test_batch_mode_against_the_fixture_gives_the_same_tables(world, ia, gem, built, tmp_path):
    home = tmp_path / "home"
    ctx = _ctx(home, world, ia.host, gem.base_url, batch=True)
    jobs0, n0 = gem.count("batch_create"), len(gem.requests)
    execute(CCEDiscoverStage(), ctx)
    stats = execute(CCEParseStage(), ctx)
    jobs = gem.count("batch_create") - jobs0
    assert stats["gemini_errors"] == {}
    # jobs small enough for the fixture's 1 MiB request body; each page asked once
    assert stats["gemini_calls"] == jobs and 2 <= jobs < N_PAGES and len(gem.requests) - n0 == N_PAGES
    assert [_query(home, f"SELECT * FROM {t} ORDER BY ALL") for t in TABLES] == \
        [_query(built["home"], f"SELECT * FROM {t} ORDER BY ALL") for t in TABLES]


def test_without_gemini_the_image_only_pages_stay_unread_with_their_reason(world, ia, tmp_path):
    home = tmp_path / "home"
    ctx = _ctx(home, world, ia.host, None)
    ctx.settings.hollywood.ocr_engine = "none"  # no OCR engine either (Tesseract: tests/test_ocr_tesseract.py)
    execute(CCEDiscoverStage(), ctx)
    stats = execute(CCEParseStage(), ctx)
    assert "gemini_calls" not in stats and stats["crosscheck"] == {"pages": 0, "agree": 0, "disagree": 0}
    assert _query(home, "SELECT item_id, page, reason FROM pd_unparsed WHERE kind = 'page' ORDER BY 1, 2") == [
        (IMAGE_ONLY_VOLUME, 0, "ocr_unavailable"), (IMAGE_ONLY_VOLUME, 1, "ocr_unavailable")]
    assert _query(home, f"SELECT count(*) FROM pd_registrations WHERE item_id = '{IMAGE_ONLY_VOLUME}'") == [(0,)]
    with pd_connect(pd_state_db(ctx.settings)) as con:
        extractors = Counter(r[0] for r in con.execute("SELECT extractor FROM pd_registrations").fetchall())
    assert extractors == {"ocr-rules": 22}
