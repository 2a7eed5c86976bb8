"""CCE Gemini page extractor (extractors/cce/gemini_pages.py on extractors/gemini_pages.py): the
real google-genai client against the loopback fixture (fixtures/gemini_pages_server.py with the
CCE half in fixtures/gemini_cce_server.py) answering the CCE sample world's PDF pages — rendered
by pdf2image as the flow renders them — from gold, with a misread renewal number and a dropped
entry planted. Rows vs gold, to_records vs the OCR-text parser on the same pages, cache, quota
and other failures with reason codes, batch mode, the worked examples, and the key never shown."""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from cinesub.sample.cce import IMAGE_ONLY_VOLUME, REGS, RENS, cce_date
from cinesub.sample.cce_examples import write_cce_gemini_examples
from extractors.cce.gemini_pages import (
    EXAMPLES_DIR,
    PROMPT_VERSION,
    ROW_FIELDS,
    GeminiCCEExtractor,
    load_examples,
    page_agreement,
    page_refs_from_world,
    parse_answer,
    record_key,
    to_records,
)
from extractors.cce.parse import (
    Unparsed,
    parse_registration_entry,
    parse_renewal_text,
    volume_coverage,
    volume_year,
)
from extractors.ia_pages import hocr_pages
from fixtures.gemini_pages_server import GeminiPagesFixture
from tests._cce_world import world  # noqa: F401  (module fixture: the CCE sample world)

KEY = "fixture-cce-key-SECRET-1a2b3c4d5e6f"
MODEL = "gemini-fixture-cce"
MIDNIGHT = ("catalogofcopyri1961motsynth", 1)  # renewal number misread R285114 -> R285144
PATROL = ("motionpict19121939synth", 1)  # NIGHT PATROL (LP4580, 2Feb34) dropped


@pytest.fixture(scope="module")
def refs(world):
    """The world's volume PDFs rendered as the flow renders them (pdf2image, PAGE_DPI)."""
    return page_refs_from_world(world)


@pytest.fixture()
def server(world):
    with GeminiPagesFixture(world, api_key=KEY) as srv:
        yield srv


def _extractor(srv, cache_dir: Path | None, **options) -> GeminiCCEExtractor:
    """The CCE reader against the fixture (fast retries), caching under ``cache_dir``."""
    return GeminiCCEExtractor(KEY, model=options.pop("model", MODEL), base_url=srv.base_url, cache_dir=cache_dir,
                              retry_initial_delay_s=0.01, **options)


def _gold_rows(root: Path):
    """(item, page) → Counter of row keys, values as printed, built from the generator's data."""
    printed = {n.case: n for n in RENS}
    out = defaultdict(Counter)
    for gp in sorted(root.glob("gold/*/*.json")):
        g = json.loads(gp.read_text(encoding="utf-8"))
        for e in g["entries"]:
            if g["kind"] == "registrations":
                k = ("registration", e["title"].upper(), e["printed_reg_id"] or e["reg_id"], cce_date(e["reg_date"]),
                     None, None, e["claimant"], None)
            else:
                n = printed[e["case"]]
                k = ("renewal", n.title.upper(), n.printed_reg_id or n.orig_reg_id,
                     n.printed_orig_date or cce_date(n.orig_date), n.printed_renewal_id or n.renewal_id,
                     cce_date(n.renewal_date), n.claimant, n.basis)
            out[(g["item_id"], g["page"])][k] += 1
    return out


def _row_key(r):
    return (r["kind"], r["title"], r["reg_id"], r["reg_date"], r["renewal_id"], r["renewal_date"], r["claimant"],
            r["basis"])


def test_rows_match_gold_except_the_planted_errors(server, world, refs, tmp_path):
    res = _extractor(server, tmp_path / "cache").extract_pages(refs)
    assert res.errors == [] and res.calls == len(refs) == 16 and server.unknown_images == 0
    assert all(tuple(r) == ROW_FIELDS for r in res.rows)
    assert {r["extractor"] for r in res.rows} == {"gemini"} and {r["model"] for r in res.rows} == {MODEL}
    got = defaultdict(Counter)
    for r in res.rows:
        got[(r["item_id"], r["page"])][_row_key(r)] += 1
    gold = _gold_rows(world)
    diffs = {}
    for page in set(gold) | set(got):
        missing, extra = gold[page] - got[page], got[page] - gold[page]
        if missing or extra:
            diffs[page] = (sorted(missing, key=str), sorted(extra, key=str))
    assert set(diffs) == {MIDNIGHT, PATROL}
    (m_missing,), (m_extra,) = diffs[MIDNIGHT]
    assert (m_missing[4], m_extra[4]) == ("R285114", "R285144") and m_missing[:4] == m_extra[:4]
    (p_missing,), p_extra = diffs[PATROL]
    assert p_missing[:4] == ("registration", "NIGHT PATROL", "LP4580", "2Feb34") and p_extra == []
    # values verbatim as printed, OCR-looking damage included
    printed = {(r["reg_id"], r["reg_date"], r["renewal_id"]) for r in res.rows}
    assert ("LP46O1", "9Feb34", None) in printed and ("1P4412", "10Jan34", "R285530") in printed
    assert ("LP5012", "220ct34", "R2850141") in printed
    assert sum(1 for r in res.rows if r["page"] == 0) == 0  # title pages: no rows


def _ocr_records(root, item, page):
    """The OCR-text parser on the world's djvu text of one leaf, read in the volume's years as the
    cce-parse stage reads it; returns (records, the reading options to give to_records)."""
    meta = json.loads((root / "ia" / item / "_item.json").read_text(encoding="utf-8"))
    year = volume_year(item, meta["title"], meta["date"])
    d = root / "ia" / item
    text = hocr_pages((d / f"{item}_hocr_searchtext.txt.gz").read_bytes(),
                      (d / f"{item}_hocr_pageindex.json.gz").read_bytes())[page]
    if "RENEWAL" in text[:300].upper():
        return parse_renewal_text(text, volume_year=year).records, {"volume_year": year}
    opts = {"volume_year": year, "coverage": volume_coverage(item, meta["title"])}
    recs = []
    for line in text.splitlines():  # the sample world prints one entry a line
        got = parse_registration_entry(line, **opts)
        if not isinstance(got, Unparsed):
            recs += got
    return recs, opts


def test_to_records_agrees_with_the_ocr_parser_except_where_errors_were_planted(server, world, refs, tmp_path):
    res = _extractor(server, tmp_path / "cache").extract_pages(refs)
    by_page = defaultdict(list)
    for r in res.rows:
        by_page[(r["item_id"], r["page"])].append(r)
    table = {}
    n_matched = 0
    image_only = {}
    for ref in refs:
        k = (ref.item_id, ref.page)
        if ref.item_id == IMAGE_ONLY_VOLUME:  # no text layer, so no OCR: Gemini alone, checked against gold below
            meta = json.loads((world / "ia" / ref.item_id / "_item.json").read_text(encoding="utf-8"))
            conv = to_records(by_page[k], volume_year=volume_year(ref.item_id, meta["title"], meta["date"]),
                              coverage=volume_coverage(ref.item_id, meta["title"]))
            assert conv.unparsed == []
            image_only[k] = sorted(record_key(x) for x in conv.records)
            continue
        ocr, opts = _ocr_records(world, *k)
        conv = to_records(by_page[k], **opts)
        assert conv.unparsed == []
        table[k] = page_agreement(ocr, conv.records)
        n_matched += table[k]["matched"]
        # where both read an entry, the same normalisation gives the same candidates
        gem = {record_key(x): x for x in conv.records}
        for x in ocr:
            y = gem.get(record_key(x))
            if y is None:
                continue
            if hasattr(x, "reg_candidates"):
                assert x.reg_candidates == y.reg_candidates and x.reg_date == y.reg_date
            else:
                assert x.orig_reg_candidates == y.orig_reg_candidates and x.orig_date == y.orig_date
                if k != MIDNIGHT:
                    assert (x.renewal_id, x.renewal_date, x.basis) == (y.renewal_id, y.renewal_date, y.basis)
    disagree = {k: v for k, v in table.items() if not v["agree"]}
    assert set(disagree) == {MIDNIGHT, PATROL}
    assert disagree[PATROL]["ocr_only"] == ["registration|LP4580|1934-02-02"]
    assert disagree[PATROL]["gemini_only"] == [] and disagree[PATROL]["renewal_differs"] == []
    assert disagree[MIDNIGHT]["renewal_differs"] == ["renewal|LP4388|1934-01-05: R285114 != R285144"]
    assert disagree[MIDNIGHT]["ocr_only"] == disagree[MIDNIGHT]["gemini_only"] == []
    printed_renewals = [n for n in RENS if n.volume != "cprs"]
    assert image_only == {(IMAGE_ONLY_VOLUME, 0): [],
                          (IMAGE_ONLY_VOLUME, 1): [("registration", "LP26990", "1963-12-12"),
                                                   ("registration", "LP28001", "1964-01-06")]}
    # one registration dropped; the image-only volume's two are read by Gemini alone
    assert n_matched + 2 == len(REGS) + len(printed_renewals) - 1 == 30  # + the two source-work cases
    # OCR-damaged prints normalise alike (LP46O1 -> LP4601, 220ct34 -> 1934-10-22; 1P4412 whichever way the
    # normaliser reads it, the same for both readers: the 1961 page disagrees on MIDNIGHT only)
    keys = {record_key(x) for recs in by_page.values() for x in to_records(recs).records}
    assert ("registration", "LP4601", "1934-02-09") in keys and ("renewal", "LP5012", "1934-10-22") in keys
    assert table[MIDNIGHT]["matched"] == 4
    # the mixed-class 1950 list: Gemini skips the non-film entries the OCR parser also reads
    ocr50, opts = _ocr_records(world, "catalogofcopyri1950motsynth", 1)
    gem50 = to_records(by_page[("catalogofcopyri1950motsynth", 1)], **opts).records
    assert page_agreement(ocr50, gem50)["agree"]
    assert page_agreement(ocr50, gem50, film_only=False)["ocr_only"] == [
        "renewal|A681161|1922-08-01", "renewal|D63874|1923-03-08"]


def test_cache_second_run_makes_zero_requests(server, refs, tmp_path):
    first = _extractor(server, tmp_path / "cache").extract_pages(refs)
    n = server.count("generate")
    assert n == len(refs) and first.calls == len(refs)
    again = _extractor(server, tmp_path / "cache")  # a new process, same cache dir
    second = again.extract_pages(refs)
    assert server.count("generate") == n and second.calls == 0 and second.cache_hits == len(refs)
    assert second.rows == first.rows
    assert again.cache_path(refs[1].sha256).parts[-2] == PROMPT_VERSION == "cce-pages-v1"
    batch = _extractor(server, tmp_path / "cache").extract_pages_batch(refs, poll_interval_s=0.01)  # cached too
    assert batch.calls == 0 and server.count("batch_create") == 0 and batch.rows == first.rows


def test_batch_mode_gives_the_same_rows(server, refs, tmp_path):
    seq = _extractor(server, tmp_path / "seq").extract_pages(refs)
    n0 = len(server.requests)
    bat = _extractor(server, tmp_path / "bat").extract_pages_batch(
        refs, poll_interval_s=0.01, max_inline_bytes=400_000)  # the loopback server reads at most 1 MiB a body
    jobs = server.count("batch_create")
    assert bat.errors == [] and bat.calls == jobs and 3 <= jobs < len(refs)
    assert sorted(r["image_sha256"] for r in server.requests[n0:]) == sorted(r.sha256 for r in refs)  # each once
    assert Counter(map(_row_key, bat.rows)) == Counter(map(_row_key, seq.rows))


def test_quota_429_gets_its_reason_code_and_the_key_never_shows(server, refs, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    pages = [r for r in refs if r.page == 1][:3]
    ex = _extractor(server, tmp_path / "cache", attempts=2, max_workers=1)
    server.queue("429", "429")  # both attempts of the first page
    errors_path = tmp_path / "errors.jsonl"
    res = ex.extract_pages(pages, errors_path=errors_path)
    assert [(e.item_id, e.page, e.reason) for e in res.errors] == [(pages[0].item_id, 1, "quota")]
    assert [e.status for e in server.log[:2]] == [429, 429]
    recorded = [json.loads(line) for line in errors_path.read_text().splitlines()]
    assert recorded[0]["reason"] == "quota" and recorded[0]["image_sha256"] == pages[0].sha256
    assert {r["item_id"] for r in res.rows} == {pages[1].item_id, pages[2].item_id}
    rerun = ex.extract_pages(pages)  # not cached: asked again
    assert rerun.errors == [] and rerun.calls == 1
    server.queue("malformed", "schema", "blocked")
    assert ex.extract_page(pages[0])[1] is None  # cached now: no request, no fault consumed
    assert server.pending_faults == ["malformed", "schema", "blocked"]
    fresh = _extractor(server, tmp_path / "fresh", attempts=1)
    reasons = [fresh.extract_page(pages[0])[1].reason for _ in range(3)]
    assert reasons == ["malformed_json", "schema_mismatch", "blocked"]
    wrong = GeminiCCEExtractor("wrong-key-777", model=MODEL, base_url=server.base_url, attempts=1)
    err = wrong.extract_page(pages[0])[1]
    assert err.reason == "auth_failed" and "wrong-key-777" not in err.detail
    outputs = [caplog.text, errors_path.read_text(), repr(ex), json.dumps(res.rows), json.dumps(server.requests),
               str(server.log), str([vars(e) for e in res.errors]), json.dumps(rerun.rows)]
    assert all(KEY not in o for o in outputs) and "api_key='***'" in repr(ex)


def test_request_shape_examples_and_schema(server, refs, tmp_path):
    ex = _extractor(server, tmp_path / "cache", thinking_level="low", media_resolution="high")
    rows, err = ex.extract_page(refs[1])
    assert err is None and rows
    req = server.requests[-1]
    assert req["model"] == MODEL and req["n_images"] == 3 and req["image_sha256"] == refs[1].sha256
    cfg = req["generationConfig"]
    schema = cfg.get("responseSchema") or cfg.get("responseJsonSchema")
    assert schema["type"].upper() == "ARRAY"
    assert set(schema["items"]["properties"]) == {"kind", "title", "reg_id", "reg_date", "renewal_id",
                                                  "renewal_date", "claimant", "basis", "conf"}
    assert schema["items"]["properties"]["kind"]["enum"] == ["registration", "renewal"]
    assert cfg["mediaResolution"] == "MEDIA_RESOLUTION_HIGH" and "LOW" in json.dumps(cfg["thinkingConfig"]).upper()
    assert "EXACTLY as printed" in req["system"] and "1954 on" in req["system"]


def test_one_fixture_serves_variety_and_cce_worlds(world, refs, tmp_path):
    from cinesub.sample.variety import generate_variety_world
    from extractors.variety.gemini_pages import GeminiPageExtractor
    from extractors.variety.gemini_pages import page_refs_from_world as variety_refs

    vroot = tmp_path / "variety"
    generate_variety_world(vroot, seed=1934)
    vrefs = variety_refs(vroot)[2:4]
    with GeminiPagesFixture(vroot, world, api_key=KEY) as srv:
        v = GeminiPageExtractor(KEY, model=MODEL, base_url=srv.base_url, cache_dir=tmp_path / "c")
        c = _extractor(srv, tmp_path / "c")  # one cache dir, separate prompt versions
        vres, cres = v.extract_pages(vrefs), c.extract_pages(refs[:2])
        assert vres.errors == cres.errors == [] and srv.unknown_images == 0
        assert vres.rows and {"theater", "gross"} <= set(vres.rows[0])
        assert cres.rows and {"reg_id", "renewal_id"} <= set(cres.rows[0])
        assert v.cache_path(vrefs[0].sha256).parent != c.cache_path(refs[1].sha256).parent


def test_shipped_examples_are_the_generator_output(tmp_path):
    written = write_cce_gemini_examples(tmp_path)
    assert sorted(p.name for p in written) == ["example1.json", "example1.png", "example2.json", "example2.png"]
    for p in written:
        assert p.read_bytes() == (EXAMPLES_DIR / p.name).read_bytes(), p.name
    ex = load_examples()
    assert len(ex) == 2
    reg_rows, ren_rows = json.loads(ex[0][1]), json.loads(ex[1][1])
    assert {r["kind"] for r in reg_rows} == {"registration"} and {r["kind"] for r in ren_rows} == {"renewal"}
    assert any(r["reg_id"] == "LP9O88" for r in reg_rows)  # verbatim, not corrected
    assert Counter(r["title"] for r in ren_rows)["DOUBLE TROUBLE"] == 2  # one row per registration
    assert not any(r["reg_id"].startswith("A") for r in ren_rows)  # the book entry is skipped
    conv = to_records(reg_rows + ren_rows)
    assert conv.unparsed == [] and "LP9088" in {x.reg_id for x in conv.records if hasattr(x, "reg_id")}


def test_to_records_reason_codes_and_parse_answer():
    base = {"kind": "renewal", "title": "X RAY", "reg_id": "LP100", "reg_date": "5Jan34", "renewal_id": "R285000",
            "renewal_date": "3Dec61", "claimant": "Co.", "basis": "(PwH)", "conf": 0.9}
    ok = to_records([base]).records[0]
    assert (ok.orig_reg_id, ok.orig_date, ok.renewal_date, ok.basis, ok.layout) == \
        ("LP100", "1934-01-05", "1961-12-03", "PWH", "gemini")
    assert "basis:basis_ocr_repaired" in ok.reasons
    bad = to_records([{**base, "reg_date": "zz"}, {**base, "renewal_id": None}, {**base, "renewal_date": "??"},
                      {**base, "kind": "registration", "reg_id": "PA1234", "renewal_id": None,
                       "renewal_date": None}])
    assert [u.reason for u in bad.unparsed] == ["no_registration", "no_renewal_number", "renewal_date_unreadable"]
    pa = bad.records[0]
    assert pa.reg_id is None and pa.reg_raw == "PA1234" and "reg:class_not_expected" in pa.reasons  # as the parser
    assert to_records([{**base, "kind": "registration", "reg_id": "PA1234"}],
                      registration_classes=None).records[0].reg_id == "PA1234"
    # a cumulative volume's coverage bounds the registration year, as in the parser
    outside = to_records([{**base, "kind": "registration"}], volume_year=1959, coverage=(1950, 1959))
    assert outside.records == [] and [u.reason for u in outside.unparsed] == ["no_registration"]
    inside = to_records([{**base, "kind": "registration"}], volume_year=1939, coverage=(1912, 1939))
    assert inside.records[0].reg_date == "1934-01-05"
    assert parse_answer("")[1] == "no_text" and parse_answer("[{")[1] == "malformed_json"
    assert parse_answer('[{"kind": "entry"}]')[1] == "schema_mismatch"
    rows, why = parse_answer(json.dumps([{**base, "basis": None}]))
    assert why is None and rows[0].basis is None
    with pytest.raises(ValueError):
        GeminiCCEExtractor("")
