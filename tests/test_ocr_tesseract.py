"""Tesseract for pages with no or unusable text layer (extractors/ocr_tesseract.py, issue 17 point 3):
the measurable "unusable" rule, the real Tesseract on pages the sample worlds render (its text
feeds the Variety page filter and the OCR-rules extractor), the reason codes when it cannot help
(``ocr_unavailable`` with no binary, ``ocr_failed`` on bytes that are no image, ``no_page_image``),
and the CCE stages without Gemini: the image-only volume is read from Tesseract's text
(``extractor='tesseract'``, ``text_engine`` per page), or, with no Tesseract, each of its pages is
an ``ocr_unavailable`` row — never a crash. (Accuracy on every gold page: benchmarks/bench_ocr.py.)"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from cinesub.sample.cce import IMAGE_ONLY_VOLUME
from cinesub.sample.scans import png_bytes, render_page
from cinesub.settings import load_settings
from extractors import ocr_tesseract as T
from flows.env.sample import SampleEnvironment
from flows.kernel_context import GeminiPlan, RunContext
from flows.kernel_exec import execute
from flows.stages.hollywood.cce import CCEDiscoverStage, CCEParseStage
from flows.stages.hollywood.common import pd_state_db
from fixtures.ia_server import IAFixture
from tests._cce_world import ia, world  # noqa: F401  (module fixtures)

needs_tesseract = pytest.mark.skipif(T.tesseract_version() is None, reason="tesseract-ocr is not installed "
                                     "(scripts/setup.sh installs it)")

GROSSES_LINES = [  # the head of a sample Variety grosses page (cinesub.sample.variety gold text)
    "PICTURES    VARIETY    Wednesday, June 2, 1926",
    "'Desert Sheikh' $34,000 in Chi; 'Her Bargain Day' 38G",
    "Broadway",
    "Estimates for Last Week",
    "Capitol (4,620; 35-$1.65)—\"Desert Sheikh\" (Par) (2d wk). Stout $34,000.",
    "Strand (2,900; 25-75)—\"Her Bargain Day\" (M-G). Smart $38,500.",
    "Rialto (2,035; 25-65)—\"Ranch of Dreams\" (FN). Neat $58,000.",
]


@pytest.fixture()
def no_tesseract(monkeypatch):
    """pytesseract pointed at a binary that does not exist (as on a machine without tesseract-ocr)."""
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    T.tesseract_version.cache_clear()
    yield
    T.tesseract_version.cache_clear()


# ---------------------------------------------------------------------------------------------
# the "unusable text layer" rule
def test_text_quality_counts_dictionary_like_tokens_and_leaves_numbers_out():
    q = T.text_quality("PICTURE GROSSES: Roxy $11,500, 15Jan34; LP4520. l'\\^i ,;tr 1Ii xQz")
    # PICTURE GROSSES Roxy are words; $11,500 15Jan34 LP4520 1Ii are numeric; l'\^i tr xQz are not words
    assert (q.tokens, q.words, q.alpha) == (10, 3, 6)
    assert q.ratio == 0.5


@pytest.mark.parametrize("text, reason", [
    (None, T.NO_TEXT_LAYER),
    (" \n\f ", T.NO_TEXT_LAYER),
    ("Estimates for This Week at the Paramount, a big week for Wonder Bar", None),
    ("ll ;' ^ii Tr xQ rrn Iil .,' ~~ vvv ' hjk nnn", T.UNUSABLE_TEXT_LAYER),  # OCR garbage: few words
    ("the 24,000 19,500 11,000 8,000 5,500", T.UNUSABLE_TEXT_LAYER),  # too few words (threshold 5)
])
def test_unusable_reason(text, reason):
    assert T.unusable_reason(text) == reason


def test_the_thresholds_are_settings():
    text = "Roxy Capitol Paramount xQz vvv hjk"  # 3 words of 6: usable at 0.5, not at 0.6 or 4 words
    assert T.unusable_reason(text, min_words=3, min_word_ratio=0.5) is None
    assert T.unusable_reason(text, min_words=3, min_word_ratio=0.6) == T.UNUSABLE_TEXT_LAYER
    assert T.unusable_reason(text, min_words=4, min_word_ratio=0.5) == T.UNUSABLE_TEXT_LAYER
    hs = load_settings(None, Path("/tmp")).hollywood
    assert T.options_of(hs) == {"engine": "tesseract", "lang": "eng", "min_words": 5, "min_word_ratio": 0.5}


@pytest.mark.realdata
def test_a_real_ia_text_layer_is_usable(realdata_dir):
    text = (realdata_dir / "live" / "internet_archive" / "ia_djvu_txt_real_noff_fixture.txt").read_text(encoding="utf-8")
    assert T.unusable_reason(text) is None


# ---------------------------------------------------------------------------------------------
# the engine
@needs_tesseract
def test_tesseract_text_of_a_rendered_grosses_page_feeds_the_filter_and_the_rules_extractor():
    from extractors.variety.ocr_grosses import extract_page
    from extractors.variety.page_filter import classify_page

    got = T.ocr_image(png_bytes(render_page(GROSSES_LINES, width=700)))
    assert got.engine == T.ENGINE and got.reason is None
    assert T.error_rates("\n".join(GROSSES_LINES), got.text)["cer"] < 0.03
    assert classify_page(got.text).keep
    want = {(t.theater, t.gross) for t in extract_page("\n".join(GROSSES_LINES)).tuples}
    assert want == {("Capitol", 34000), ("Strand", 38500), ("Rialto", 58000)}
    assert {(t.theater, t.gross) for t in extract_page(got.text).tuples} == want


@needs_tesseract
def test_resolve_page_text_uses_the_layer_when_usable_and_tesseract_when_not():
    image = png_bytes(render_page(GROSSES_LINES, width=700))
    layer = "Estimates for This Week: the Paramount has Wonder Bar, big business"
    assert T.resolve_page_text(layer, image) == T.PageText(layer, T.TEXT_LAYER_ENGINE, None)
    for text, why in ((None, T.NO_TEXT_LAYER), ("'^ ;l1 |I ..", T.UNUSABLE_TEXT_LAYER)):
        got = T.resolve_page_text(text, image)
        assert (got.engine, got.reason) == (T.ENGINE, why) and "Rialto" in got.text


def test_reasons_when_tesseract_cannot_help(no_tesseract):
    image = png_bytes(render_page(GROSSES_LINES, width=700))
    got = T.ocr_image(image)
    assert (got.text, got.engine, got.reason) == (None, None, T.OCR_UNAVAILABLE)
    assert "tesseract" in got.detail
    # a missing layer stays missing; an unusable one is kept as the archive gave it
    def tri(p: T.PageText) -> tuple:
        return p.text, p.engine, p.reason

    assert tri(T.resolve_page_text(None, image)) == (None, None, T.OCR_UNAVAILABLE)
    assert tri(T.resolve_page_text("'^ ;l1", image)) == ("'^ ;l1", T.TEXT_LAYER_ENGINE, T.OCR_UNAVAILABLE)
    assert tri(T.resolve_page_text(None, None)) == (None, None, T.NO_PAGE_IMAGE)
    assert T.resolve_page_text(None, image, engine="none").reason == T.OCR_UNAVAILABLE


@needs_tesseract
def test_bytes_that_are_no_image_are_ocr_failed_not_an_exception():
    got = T.ocr_image(b"%PDF-1.4 not an image")
    assert (got.text, got.reason) == (None, T.OCR_FAILED) and "UnidentifiedImageError" in got.detail


def test_error_rates():
    assert T.error_rates("LP4520 15Jan34", "LP4520  15Jan34") == {
        "cer": 0.0, "wer": 0.0, "ref_chars": 14, "ref_words": 2, "char_edits": 0, "word_edits": 0}
    e = T.error_rates("ATOMIC SUNSET", "ATOM1C SUNSET")
    assert (e["char_edits"], e["word_edits"]) == (1, 1)


# ---------------------------------------------------------------------------------------------
# the CCE stages without Gemini


def _ctx(home: Path, world: Path, ia_host: str) -> RunContext:
    settings = load_settings(None, home)
    env = SampleEnvironment.attached(settings, worlds={"cce": world}, digest="test-world",
                                     endpoints={"ia_host": ia_host, "gemini_url": None})
    return RunContext(settings=settings, run_id="r1", flow="build-hollywood", env=env,
                      gemini=GeminiPlan(available=False, model=None, primary_extractor="ocr-rules"))


def _query(ctx: RunContext, sql: str) -> list[tuple]:
    with duckdb.connect(str(pd_state_db(ctx.settings)), read_only=True) as con:
        return con.execute(sql).fetchall()


@needs_tesseract
def test_without_gemini_the_image_only_volume_is_read_with_tesseract(world, ia, tmp_path):
    ctx = _ctx(tmp_path / "home", world, ia.host)
    disc = execute(CCEDiscoverStage(), ctx)
    parse = execute(CCEParseStage(), ctx)
    assert disc["text_reasons"] == {"no_text_layer": 2}
    assert _query(ctx, f"""SELECT page, kind, text_engine, text_reason FROM pd_cce_pages
                           WHERE item_id = '{IMAGE_ONLY_VOLUME}' ORDER BY page""") == [
        (0, "image_only", "tesseract", "no_text_layer"), (1, "image_only", "tesseract", "no_text_layer")]
    assert _query(ctx, f"SELECT DISTINCT text_engine FROM pd_cce_pages WHERE item_id <> '{IMAGE_ONLY_VOLUME}'") == [
        ("ia-ocr",)]
    gold = json.loads((world / "gold" / IMAGE_ONLY_VOLUME / "0001.json").read_text(encoding="utf-8"))["entries"]
    got = _query(ctx, f"""SELECT reg_id, CAST(reg_date AS VARCHAR), title, extractor FROM pd_registrations
                          WHERE item_id = '{IMAGE_ONLY_VOLUME}' ORDER BY reg_id""")
    assert got == sorted((e["reg_id"], e["reg_date"], e["title"].upper(), "tesseract") for e in gold)
    assert len(gold) == 2  # the 1963/1964 boundary cases
    assert not _query(ctx, "SELECT * FROM pd_unparsed WHERE kind = 'page'")
    assert Counter(r[0] for r in _query(ctx, "SELECT extractor FROM pd_registrations")) == {"ocr-rules": 22,
                                                                                         "tesseract": 2}
    assert parse["extractors"]["tesseract"] == 2


def test_without_tesseract_each_image_only_page_is_an_ocr_unavailable_row(world, ia, tmp_path, no_tesseract):
    ctx = _ctx(tmp_path / "home", world, ia.host)
    disc = execute(CCEDiscoverStage(), ctx)
    parse = execute(CCEParseStage(), ctx)
    assert disc["text_reasons"] == {"ocr_unavailable": 2}
    assert _query(ctx, "SELECT item_id, page, reason, extractor FROM pd_unparsed WHERE kind = 'page' ORDER BY 1, 2") == [
        (IMAGE_ONLY_VOLUME, 0, "ocr_unavailable", "tesseract"), (IMAGE_ONLY_VOLUME, 1, "ocr_unavailable", "tesseract")]
    assert Counter(r[0] for r in _query(ctx, "SELECT extractor FROM pd_registrations")) == {"ocr-rules": 22}
    assert "tesseract" not in parse["extractors"]


# ---------------------------------------------------------------------------------------------
# variety-discover: a page whose IA text is blank is read from its jp2 member
def _blank_hocr_page(item_dir: Path, ident: str, page: int) -> None:
    """Overwrite page ``page`` of the item's hOCR search text with spaces (offsets unchanged)."""
    import gzip

    st_path, pi_path = item_dir / f"{ident}_hocr_searchtext.txt.gz", item_dir / f"{ident}_hocr_pageindex.json.gz"
    text = gzip.decompress(st_path.read_bytes()).decode("utf-8")
    start, end = json.loads(gzip.decompress(pi_path.read_bytes()))[page][:2]
    st_path.write_bytes(gzip.compress((text[:start] + " " * (end - start) + text[end:]).encode("utf-8"), mtime=0))


@needs_tesseract
def test_variety_discover_reads_a_page_without_text_with_tesseract(tmp_path):
    from types import SimpleNamespace

    from cinesub.rawstore import RawStore
    from cinesub.sample.variety import generate_variety_world
    from extractors.ia import IAClient, ia_retry_policy, make_session
    from extractors.variety.ocr_grosses import extract_page
    from extractors.variety.page_filter import classify_page
    from flows.stages.hollywood.common import pd_connect
    from flows.stages.hollywood.variety import VarietyDiscoverStage

    ident, page = "variety83-1926-06", 2  # a grosses page (8 gold tuples)
    generate_variety_world(tmp_path / "variety", seed=1934)
    _blank_hocr_page(tmp_path / "variety" / "ia" / ident, ident, page)
    gold = json.loads((tmp_path / "variety" / "gold" / ident / f"{page:04d}.json").read_text(encoding="utf-8"))
    settings = load_settings(home=tmp_path / "home")
    settings.hollywood.variety_start, settings.hollywood.variety_end = "1926-01-01", "1926-12-31"
    store = RawStore.for_settings(settings)
    with IAFixture(tmp_path / "variety") as srv:
        client = IAClient(make_session(srv.host), store, retry=ia_retry_policy(max_attempts=2, backoff_base_s=0.0))
        ctx = SimpleNamespace(settings=settings, env=SimpleNamespace(ia_client=lambda st: client), items=None)
        with pd_connect(pd_state_db(settings)) as con:
            stats = VarietyDiscoverStage().run(ctx, con)
            rows = con.execute("SELECT page, ocr_sha256, text_engine, text_reason FROM pd_pages WHERE item_id = ? "
                               "ORDER BY page", [ident]).fetchall()
        members = [e.path for e in srv.log if ".jp2" in e.path]
    assert stats["text_reasons"] == {"no_text_layer": 1}
    assert [(p, e, r) for p, _, e, r in rows if p == page] == [(page, "tesseract", "no_text_layer")]
    assert {e for p, _, e, _ in rows if p != page} == {"ia-ocr"}
    assert len(members) == 1  # only that page's image was fetched
    text = store.get(next(sha for p, sha, _, _ in rows if p == page)).decode("utf-8")
    assert classify_page(text).keep  # Tesseract's text feeds the page filter ...
    got = {(t.theater, t.gross) for t in extract_page(text).tuples}  # ... and the OCR-rules extractor
    assert got == {(t["theater"], t["gross"]) for t in gold["tuples"]}
