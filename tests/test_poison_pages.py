"""Issue 14 point 1, source and scan pages: one page whose reading or parsing raises is a recorded
rejection (reason ``internal_error``, exception type, detail) and the stage goes on with the
others -- the inventory's review and IMDb pages here (Hollywood scan pages: test_pd_stages.py)."""

from __future__ import annotations

import json
import shutil

import duckdb

from cinesub.settings import load_settings
from flows.env.sample import SampleEnvironment
from flows.kernel_context import RunContext
from flows.kernel_exec import execute


def test_inventory_records_a_poison_page_and_parses_the_others(tmp_path, world, monkeypatch):
    from flows.stages.subtitles.inventory import InventoryStage

    root = tmp_path / "world"
    shutil.copytree(world, root, ignore=shutil.ignore_patterns("subtitles"))
    kim_pages, csm_pages = sorted((root / "kim").rglob("*.html")), sorted((root / "csm").glob("*.html"))
    bad_kim, bad_csm = kim_pages[0], csm_pages[-1]
    bad_kim_id = bad_kim.relative_to(root / "kim").with_suffix("").as_posix()  # "<letter>/<slug>"
    bad_kim.write_bytes(b"<html>\xff\xfe not utf-8 \x80</html>")  # undecodable page bytes
    bad_csm.write_bytes(b"\xc3\x28" * 40)
    titles = sorted(p.name for p in (root / "imdb" / "title").iterdir())
    bad_imdb = titles[1]

    import extractors.sources.imdb as imdb_mod

    real_parse = imdb_mod.parse_imdb_title

    def parse(index_html, *rest):  # an unforeseen parser bug on one title page
        if bad_imdb in index_html:
            raise KeyError("planted parser bug")
        return real_parse(index_html, *rest)

    clean = load_settings(home=tmp_path / "clean")
    execute(InventoryStage(), RunContext(settings=clean, run_id="r0", env=SampleEnvironment.attached(clean, world=world)))
    with duckdb.connect(str(clean.state_db), read_only=True) as con:
        clean_films = dict(con.execute("SELECT kim_id, imdb_id FROM films WHERE imdb IS NOT NULL").fetchall())
        assert con.execute("SELECT count(*) FROM source_errors").fetchone()[0] == 0
    assert bad_imdb in clean_films.values()

    monkeypatch.setattr(imdb_mod, "parse_imdb_title", parse)
    settings = load_settings(home=tmp_path / "home")
    stats = execute(InventoryStage(), RunContext(settings=settings, run_id="r1", env=SampleEnvironment.attached(settings, world=root)))
    assert stats["source_errors"] == 3 and stats["kim_pages"] == len(kim_pages)

    with duckdb.connect(str(settings.state_db), read_only=True) as con:
        errors = {r[0]: r[1:] for r in con.execute(
            "SELECT source, key, sha256, reason, error_type, detail FROM source_errors").fetchall()}
        films = con.execute("SELECT kim_id, imdb_id_status, kim, imdb IS NOT NULL FROM films").fetchall()
        with_imdb = dict(con.execute("SELECT kim_id, imdb_id FROM films WHERE imdb IS NOT NULL").fetchall())
    assert set(errors) == {"kim", "csm", "imdb_title"}
    assert errors["kim"][:4] == (bad_kim_id, errors["kim"][1], "internal_error", "UnicodeDecodeError")
    assert errors["kim"][1] is not None  # the bytes are kept in the raw store
    assert errors["csm"][0] == bad_csm.stem and errors["csm"][3] == "UnicodeDecodeError"
    assert errors["imdb_title"][0] == bad_imdb and errors["imdb_title"][3:] == ("KeyError", "'planted parser bug'")
    # the poison KIM page is a gate-1 drop with its reason; every other page was parsed
    by_kim = {k: (s, j, i) for k, s, j, i in films}
    assert len(by_kim) == len(kim_pages)
    status, kim_json, _ = by_kim[bad_kim_id]
    assert status == "unparsed" and json.loads(kim_json)["reason"] == "internal_error"
    assert sum(s == "unparsed" for s, _, _ in by_kim.values()) == 1
    # every film keeps its IMDb record but the two whose page raised
    assert with_imdb == {k: v for k, v in clean_films.items() if k != bad_kim_id and v != bad_imdb}


class PlantedBug(Exception):
    pass


GOOD_REG = "BROADWAY SERENADE OF 1934. 9 reels. © Metro-Goldwyn-Mayer Corp.; 10Jan34; LP4412.\n"
GOOD_GROSSES = ("Wednesday, March 14, 1934    PICTURE GROSSES    VARIETY\n"
                "Estimates for This Week\nPalace (1,800; 25-50)—'Crimson Trail' (Par). Fair $8,200.\n")


def _pd_home(tmp_path):
    from flows.stages.hollywood.common import pd_connect, pd_state_db, raw_store

    settings = load_settings(None, tmp_path / "home")
    ctx = RunContext(settings=settings, run_id="r1")
    store = raw_store(ctx)
    texts = [b"", b"\xff\xfe\x80 not utf-8 \xc3\x28", b""]
    return settings, ctx, store, texts, pd_connect, pd_state_db


def test_variety_page_that_raises_is_recorded_and_the_others_go_on(tmp_path, monkeypatch):
    import extractors.variety.ocr_grosses as ocr_mod
    import extractors.variety.page_filter as filter_mod
    from flows.stages.hollywood.common import replace_rows
    from flows.stages.hollywood.variety import VarietyExtractStage, VarietyFilterStage

    settings, ctx, store, texts, pd_connect, pd_state_db = _pd_home(tmp_path)
    texts[0], texts[2] = GOOD_GROSSES.encode(), (GOOD_GROSSES + "POISON\n").encode()
    shas = [store.put(t)[0] for t in texts]
    with pd_connect(pd_state_db(settings)) as con:
        replace_rows(con, "pd_pages", [{"item_id": "variety1934", "page": i, "issue_date": None,
                                        "issue_date_source": "item_date", "ocr_sha256": s, "image_sha256": None}
                                       for i, s in enumerate(shas)])
    real_classify, real_extract = filter_mod.classify_page, ocr_mod.extract_page

    def classify(text, *a, **k):
        if "POISON" in text:
            raise PlantedBug("filter bug")
        return real_classify(text, *a, **k)

    def extract(text, *a, **k):
        if "POISON" in text:
            raise PlantedBug("extractor bug")
        return real_extract(text, *a, **k)

    monkeypatch.setattr(filter_mod, "classify_page", classify)
    monkeypatch.setattr(ocr_mod, "extract_page", extract)
    stats = execute(VarietyFilterStage(), ctx)
    assert stats["pages"] == 3 and stats["reasons"]["internal_error"] == 2
    with pd_connect(pd_state_db(settings)) as con:
        rows = con.execute("SELECT page, keep, reason, phrase FROM pd_page_filter ORDER BY page").fetchall()
        assert rows[0][2] == real_classify(GOOD_GROSSES).reason
        assert rows[1][1:3] == (False, "internal_error") and rows[1][3].startswith("UnicodeDecodeError: ")
        assert rows[2][1:] == (False, "internal_error", "PlantedBug: filter bug")
        # the extractor on all three pages (as if kept): two internal_error rows, the good page read
        replace_rows(con, "pd_page_filter", [{"item_id": "variety1934", "page": i, "keep": True, "reason": "t"}
                                             for i in range(3)])
    stats = execute(VarietyExtractStage(), ctx)
    with pd_connect(pd_state_db(settings)) as con:
        errs = con.execute("""SELECT page, extractor, reason, detail FROM pd_extract_errors
                              WHERE reason = 'internal_error' ORDER BY page""").fetchall()
        good = con.execute("SELECT count(*) FROM pd_tuples WHERE page = 0").fetchone()[0]
    assert [(p, e, r) for p, e, r, _ in errs] == [(1, "ocr-rules", "internal_error"), (2, "ocr-rules", "internal_error")]
    assert errs[0][3].startswith("UnicodeDecodeError: ") and errs[1][3] == "PlantedBug: extractor bug"
    assert good == len(real_extract(GOOD_GROSSES, issue_date=None, item_id="variety1934", page=0).tuples)


def test_cce_page_that_raises_is_recorded_and_the_others_are_read(tmp_path, monkeypatch):
    import extractors.cce.parse as parse_mod
    from flows.stages.hollywood.cce import CCEParseStage
    from flows.stages.hollywood.common import replace_rows

    settings, ctx, store, texts, pd_connect, pd_state_db = _pd_home(tmp_path)
    texts[0], texts[2] = GOOD_REG.encode(), ("POISON " + GOOD_REG).encode()
    shas = [store.put(t)[0] for t in texts]
    with pd_connect(pd_state_db(settings)) as con:
        replace_rows(con, "pd_cce_items", [{"item_id": "cce1934", "title": "Motion pictures 1934",
                                            "context_year": 1934, "n_pages": 3, "text_source": "djvu"}])
        replace_rows(con, "pd_cce_pages", [{"item_id": "cce1934", "page": i, "kind": "registrations",
                                            "ocr_sha256": s, "image_sha256": None} for i, s in enumerate(shas)])
    real = parse_mod.parse_registration_text

    def parse(text, *a, **k):
        if "POISON" in text:
            raise PlantedBug("parser bug")
        return real(text, *a, **k)

    monkeypatch.setattr(parse_mod, "parse_registration_text", parse)
    stats = execute(CCEParseStage(), ctx)
    assert stats["unparsed"]["internal_error"] == 2
    with pd_connect(pd_state_db(settings)) as con:
        rows = con.execute("""SELECT page, kind, extractor, detail FROM pd_unparsed
                              WHERE reason = 'internal_error' ORDER BY page""").fetchall()
        regs = con.execute("SELECT page, reg_id FROM pd_registrations ORDER BY page").fetchall()
    assert [r[:3] for r in rows] == [(1, "page", "ocr-rules"), (2, "page", "ocr-rules")]
    assert rows[0][3].startswith("UnicodeDecodeError: ") and rows[1][3] == "PlantedBug: parser bug"
    assert regs == [(0, "LP4412")]
